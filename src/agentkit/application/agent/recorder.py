"""StepRecorder: one run's trace as it is written, step by step, to the durable sink and the observers."""

import asyncio
from collections.abc import Sequence
from typing import Any

import structlog

from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agent.prompts import PromptLog, stored_step
from agentkit.application.errors import StoreUnavailable
from agentkit.domain.messages import Message, Usage
from agentkit.domain.steps import PromptDelta, PromptRef, Step
from agentkit.domain.tools import ToolSchema

logger = structlog.get_logger(__name__)


class StepRecorder:
    """Numbers a run's steps and hands each to every sink.

    The durable sink's refusals are counted (`gaps`): a run whose trace lacks a step cannot claim
    success. An observer that fails is logged and forgotten. It also knows what the run's LLM calls
    sent before (`prompts`), so each message is stored once, and what they cost.
    """

    __slots__ = ("_llm", "deps", "gaps", "prompts", "redacted", "step_no")

    def __init__(self, deps: LoopDeps) -> None:
        self.deps = deps
        self.step_no = 0
        self.gaps = 0  # steps the durable trace sink refused to take
        self.redacted = False  # a step was stored redacted: the run cannot go on from its stored steps
        self.prompts = PromptLog(deps.prompt_policy)
        self._llm: tuple[str, str, dict[str, Any]] | None = None  # the model's provider, name and parameters

    def prompt_of(
        self, messages: Sequence[Message], schemas: Sequence[ToolSchema]
    ) -> tuple[PromptRef | None, PromptDelta | None]:
        """What the LLM call about to be made sends, as the trace stores it (None when prompts are not captured)."""
        if not self.deps.prompt_policy.capture:
            return None, None
        named = self._llm
        if named is None:  # a client names the same model and parameters on every request: asked once a run
            llm = self.deps.llm
            named = self._llm = (llm.provider, llm.model, llm.parameters)
        return self.prompts.sent(messages, schemas, provider=named[0], model=named[1], parameters=named[2])

    def cost_of(self, usage: Usage) -> float | None:
        """What an LLM call with this usage cost (None: unknown price)."""
        prices = self.deps.prices
        return None if prices is None else prices.cost_usd(self.deps.llm.provider, self.deps.llm.model, usage)

    def next_step(self) -> int:
        """The number of the step about to be recorded."""
        self.step_no += 1
        return self.step_no

    async def record(self, step: Step) -> None:
        """Give the step to the durable sink, then to the observers; never raises."""
        deps = self.deps
        if deps.prompt_policy.changes_anything:
            step = stored_step(step, deps.prompt_policy)  # what the trace may keep (never a secret)
            self.redacted = self.redacted or step.redacted
        try:
            await deps.trace.record(step)
        except Exception as exc:
            self.gaps += 1  # the durable trace lacks this step: the run cannot claim success
            logger.warning("trace_write_failed", step_no=step.step_no, sink=type(deps.trace).__name__, error=str(exc))
        for sink in deps.observers:
            try:
                await sink.record(step)
            except Exception as exc:
                logger.warning("trace_write_failed", step_no=step.step_no, sink=type(sink).__name__, error=str(exc))

    async def flush_observers(self) -> None:
        """Let the observers finish what they were given; their failures are logged."""
        for sink in self.deps.observers:
            try:
                await sink.flush()
            except Exception as exc:
                logger.warning("trace_flush_failed", sink=type(sink).__name__, error=str(exc))

    async def flush_durable(self, deadline: float) -> None:
        """Return once the durable sink holds every step recorded so far.

        A durable sink's flush waits while it retries its writes; this bounds the wait by `deadline`
        (`clock.monotonic()`).

        Raises:
            StoreUnavailable: the steps were not stored in time, or the sink failed.
        """
        if self.deps.trace.flushed():
            return  # nothing to wait for: no timer armed (a call of a non-idempotent tool flushes first)
        remaining = max(deadline - self.deps.clock.monotonic(), 0)
        try:
            async with asyncio.timeout(remaining):
                await self.deps.trace.flush()
        except TimeoutError:
            raise StoreUnavailable("the trace store did not take the steps in time") from None
        except StoreUnavailable:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"the trace store failed: {exc}") from exc
