"""The container behind `agentkit.Agent`: the service's providers, state in memory, the caller's LLM and tools."""

from collections.abc import Sequence

from dishka import AsyncContainer, Provider, Scope, provide

from agentkit.application.agent import AgentConfig
from agentkit.application.observation import RunObservers
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.tool_sandbox import ToolSandbox
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.application.tools.registry import ToolRegistry
from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.logging import quiet_library_logging
from agentkit.entrypoints.wiring.providers.core import ObserversProvider
from agentkit.entrypoints.wiring.settings import load_settings

# A library caller's goal is not an HTTP request body: its limit is far above MAX_GOAL_CHARS's default.
LIBRARY_MAX_GOAL_CHARS = 100_000


class _CallerProvider(Provider):
    """The caller's LLM (theirs to close), tools and system prompt, in place of the configured ones."""

    def __init__(self, llm: LLMClient, registry: ToolRegistry, config: AgentConfig) -> None:
        super().__init__()
        self._registry = registry
        self.provide(lambda: llm, provides=LLMClient, scope=Scope.APP)
        self.provide(lambda: config, provides=AgentConfig, scope=Scope.APP)
        # no API to follow a run's events, no /metrics, no webhooks: nobody to tell of runs and steps
        self.provide(lambda: RunObservers([]), provides=RunObservers, scope=Scope.APP)

    @provide(scope=Scope.APP)
    def registry(self, sandbox: ToolSandbox) -> ToolRegistry:
        """The caller's tools; those that run in worker processes run in this container's (closed with it)."""
        return self._registry.with_sandbox(sandbox)


def library_container(
    *,
    llm: LLMClient,
    registry: ToolRegistry,
    system_prompt: str,
    max_steps: int,
    run_timeout_s: float,
    tool_timeout_s: float,
    token_budget: int | None,
    observers: Sequence[TraceSink],
    keep_runs: int = 0,
) -> AsyncContainer:
    """A container for one `Agent`, its state in memory; nothing is read from the environment.

    The in-memory state keeps `keep_runs` ended runs, at least the last one (the Agent forgets each
    run it returned when `keep_runs` is 0).

    Logging is quiet unless the caller configured it: see `quiet_library_logging`.
    """
    quiet_library_logging()
    settings = load_settings(
        {},
        state_backend="memory",
        max_steps=max_steps,
        run_timeout_s=run_timeout_s,
        tool_timeout_s=tool_timeout_s,
        run_token_budget=token_budget,
        max_goal_chars=LIBRARY_MAX_GOAL_CHARS,
        metrics_enabled=False,  # no /metrics to serve them
        memory_max_runs=max(keep_runs, 1),  # the run just ended stays until the Agent has read it
    )
    config = AgentConfig(
        system_prompt=system_prompt,
        repeat_limit=settings.loop.max_repeated_calls,
        run_timeout_s=run_timeout_s,
        lease_s=settings.loop.run_lease_s,
        store_retry_s=settings.loop.run_store_retry_s,
        approval_ttl_s=settings.loop.approval_ttl_s,
    )
    return make_container(settings, ObserversProvider(observers), _CallerProvider(llm, registry, config))
