"""The tool registry: which tools a run may call, and `execute()`, which never raises."""

import asyncio
import copy
import time
from collections.abc import Callable, Collection, Iterable
from typing import Any

import msgspec

from agentkit.application.errors import ToolRegistrationError
from agentkit.application.ports.tool_sandbox import FunctionRef, ToolRaised, ToolSandbox, ToolStopped
from agentkit.application.tools.context import ContextProvider, ToolContext, for_call
from agentkit.application.tools.errors import ToolError
from agentkit.application.tools.slots import CallSlots
from agentkit.application.tools.tool import Isolation, Tool, function_ref
from agentkit.application.tools.within import TimeLimitPassed, call_within
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult, ToolSchema

BuildContext = Callable[[ToolContext], ToolContext]
AnyTool = Tool[..., Any]
# calls at once in a process, over all its runs, unless the registry is given its own bound
DEFAULT_PROCESS_CONCURRENCY = 64


class ToolRegistry:
    """Holds tools by name and runs them safely.

    `execute()` turns every failure into a ToolResult the model can read: an unknown tool,
    arguments that do not validate, a timeout, any exception, and output over the size limit
    (truncated and marked). Async tools run on the event loop and are cancelled at their timeout.
    Sync tools run where their `isolation` (or the registry's `sync_isolation`) says: in a worker
    thread, so they never block the loop (one that hangs past its timeout is abandoned, though its
    thread runs on until it returns), or in a worker process of the `sandbox`, killed at its
    timeout. At most `slots.limit` calls run at once in the process, whatever their run.

    Args:
        tools: Tools to register now.
        default_timeout_s: The limit for tools that set none (TOOL_TIMEOUT_S).
        output_max_chars: Longer output is truncated (TOOL_OUTPUT_MAX_CHARS).
        context_providers: `@context_provider` functions, each building the ToolContext subclass it
            supplies from the base context; a tool asking for a context type that no provider
            supplies is refused at registration.
        sandbox: The worker processes that isolated tools run in (None: such a call is a tool error
            saying there are none).
        sync_isolation: Where sync tools that do not choose run (TOOL_ISOLATION); with `process`,
            each must be importable by name (refused at registration otherwise).
        slots: The bound on calls at once in this process (TOOL_CONCURRENCY_PER_PROCESS), shared by
            the registries made from this one; a bound of DEFAULT_PROCESS_CONCURRENCY by default.
    """

    def __init__(
        self,
        tools: Iterable[AnyTool] = (),
        *,
        default_timeout_s: float = 30.0,
        output_max_chars: int = 8000,
        context_providers: Iterable[ContextProvider[Any]] = (),
        sandbox: ToolSandbox | None = None,
        sync_isolation: Isolation = "thread",
        slots: CallSlots | None = None,
    ) -> None:
        self._tools: dict[str, AnyTool] = {}
        self._schemas: tuple[ToolSchema, ...] = ()
        self._default_timeout_s = default_timeout_s
        self._output_max_chars = output_max_chars
        self._sandbox = sandbox
        self._sync_isolation: Isolation = sync_isolation
        self._slots = CallSlots(DEFAULT_PROCESS_CONCURRENCY) if slots is None else slots
        # the isolated tools' functions by the names a worker process imports them by
        self._targets: dict[str, FunctionRef] = {}
        self._providers: dict[type[ToolContext], ContextProvider[Any]] = {}
        for provider in context_providers:
            if provider.supplies in self._providers:
                raise ToolRegistrationError(f"two context providers supply {provider.supplies.__name__}")
            self._providers[provider.supplies] = provider
        for item in tools:
            self.register(item)

    def register(self, item: AnyTool) -> None:
        """Add a tool.

        Raises:
            ToolRegistrationError: the name is taken, its context type cannot be supplied, or it must
                run in a worker process and cannot be imported there by name.
        """
        if not isinstance(item, Tool):
            raise ToolRegistrationError(f"{item!r} is not a tool; decorate it with @tool")
        if item.name in self._tools:
            raise ToolRegistrationError(f"a tool named {item.name!r} is already registered")
        if item.context_type is not None and self._provider_for(item.context_type) is None:
            raise ToolRegistrationError(
                f"tool {item.name!r} asks for {item.context_type.__name__}, which this runtime cannot supply; "
                "register a context provider for it (a @context_provider function returning it)"
            )
        if not item.is_async and (item.isolation or self._sync_isolation) == "process":
            why = "isolation='process'" if item.isolation else "TOOL_ISOLATION=process (or @tool(isolation='thread'))"
            self._targets[item.name] = function_ref(item, why)
        self._tools[item.name] = item
        self._schemas = (*self._schemas, item.schema)

    def with_tools(self, extra: Iterable[AnyTool]) -> "ToolRegistry":
        """A copy of this registry with more tools (for a run's own `final_result` tool)."""
        return self._copy([*self._tools.values(), *extra])

    def with_sandbox(self, sandbox: ToolSandbox) -> "ToolRegistry":
        """A copy of this registry whose isolated tools run in `sandbox` (the library's container gives it one)."""
        copy = self._copy(self._tools.values())
        copy._sandbox = sandbox
        return copy

    def _copy(self, tools: Iterable[AnyTool]) -> "ToolRegistry":
        """A registry of these tools with this one's limits, context providers, processes and bound."""
        return ToolRegistry(
            tools,
            default_timeout_s=self._default_timeout_s,
            output_max_chars=self._output_max_chars,
            context_providers=self._providers.values(),
            sandbox=self._sandbox,
            sync_isolation=self._sync_isolation,
            slots=self._slots,
        )

    def select(
        self,
        names: Iterable[str] | None,
        *,
        extra: Iterable[AnyTool] = (),
        terminal: Collection[str] | None = None,
    ) -> "ToolRegistry":
        """A registry of some of these tools (an agent's), with the same limits and context providers.

        Args:
            names: The tools to keep, by name, in this order (None: all of them).
            extra: Tools to add (an MCP server's).
            terminal: The tools whose successful call ends the run; None keeps each tool's own flag.
                Whether a tool ends the loop is the agent's choice, so the tools are copied, not changed.

        Raises:
            ToolRegistrationError: a name is not registered here, or an extra tool's name is taken.
        """
        kept: list[AnyTool] = []
        for name in self.names() if names is None else names:
            item = self._tools.get(name)
            if item is None:
                raise ToolRegistrationError(f"unknown tool {name!r}")
            kept.append(item)
        chosen = [*kept, *extra]
        if terminal is not None:
            chosen = [_with_terminal(item, item.name in terminal) for item in chosen]
        return self._copy(chosen)

    def get(self, name: str) -> AnyTool | None:
        """The tool with this name, or None."""
        return self._tools.get(name)

    def is_idempotent(self, name: str) -> bool:
        """Whether a call of this tool may be made again (an unknown tool's call does nothing: it may)."""
        item = self._tools.get(name)
        return item is None or item.idempotent

    def requires_approval(self, name: str) -> bool:
        """Whether every call of this tool waits for a person's approval."""
        item = self._tools.get(name)
        return item is not None and item.requires_approval

    def is_barrier(self, name: str) -> bool:
        """Whether a call of this tool runs alone among its turn's calls: a sequential tool, or one ending the run."""
        item = self._tools.get(name)
        return item is not None and (item.sequential or item.terminal)

    def runs_in_process(self, name: str) -> bool:
        """Whether a call of this tool runs in a worker process."""
        return name in self._targets

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def schemas(self) -> tuple[ToolSchema, ...]:
        """The schemas shown to the model (built once, shared by every run)."""
        return self._schemas

    def __len__(self) -> int:
        return len(self._tools)

    async def execute(self, call: ToolCall, context: ToolContext) -> ToolResult:
        """Run one tool call and describe the outcome; never raises (except on cancellation)."""
        started = time.perf_counter()
        item = self._tools.get(call.name)
        if item is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return _failure(f"unknown tool {call.name!r}; the available tools are: {known}", started)
        if call.arguments_error is not None:
            return _failure(
                f"the arguments for {call.name!r} are not a valid JSON object: {call.arguments_error}", started
            )
        try:
            args = msgspec.convert(call.arguments, item.args_type)
        except msgspec.ValidationError as exc:
            return _failure(f"invalid arguments for {call.name!r}: {exc}", started)
        kwargs = msgspec.structs.asdict(args)  # its fields are the model-visible parameters, by construction
        if item.context_param is not None and item.context_type is not None:
            context = for_call(context, call.id)
            provider = self._provider_for(item.context_type)
            kwargs[item.context_param] = provider(context) if provider is not None else context
        timeout = item.timeout_s or self._default_timeout_s
        slots = self._slots
        if not slots.take_now():
            await slots.take()
        try:
            if item.is_async:
                value = await call_within(item.fn(**kwargs), timeout)
            elif call.name in self._targets:
                value = await self._in_process(call.name, kwargs, timeout)
            else:
                value = await call_within(asyncio.to_thread(item.fn, **kwargs), timeout)
        except TimeLimitPassed:
            return _failure(f"tool {call.name!r} timed out after {timeout:g} s", started)
        except TimeoutError as exc:  # the tool's own timeout (a socket's, say), not ours
            return _failure(f"tool {call.name!r} failed: TimeoutError: {exc}", started)
        except ToolError as exc:
            return _failure(str(exc), started)
        except ToolStopped as exc:
            if exc.timed_out:
                return _failure(f"tool {call.name!r} timed out after {timeout:g} s; its process was stopped", started)
            return _failure(f"tool {call.name!r} was stopped: {exc}", started)
        except ToolRaised as exc:
            return _failure(f"tool {call.name!r} failed: {exc.type_name}: {exc}", started)
        except Exception as exc:
            return _failure(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}", started)
        finally:
            slots.give()
        return self._success(value, started)

    async def _in_process(self, name: str, kwargs: dict[str, Any], timeout_s: float) -> Any:
        """The tool's function called in a worker process (killed at the timeout: the sandbox keeps it)."""
        if self._sandbox is None:
            raise ToolError(f"tool {name!r} runs in a worker process, and this runtime has no process pool")
        return await self._sandbox.call(self._targets[name], kwargs, timeout_s=timeout_s)

    def outside_result(self, output: str) -> ToolResult:
        """The result of a call answered from outside (a client tool's output), cut to the same limit as any tool's."""
        truncated = len(output) > self._output_max_chars
        return ToolResult(ok=True, output=output[: self._output_max_chars], truncated=truncated)

    def _success(self, value: Any, started: float) -> ToolResult:
        try:
            output = render(value)
        except (TypeError, ValueError, RecursionError) as exc:  # ValueError covers UnicodeDecodeError
            return _failure(f"the tool's result cannot be shown as text: {exc}", started)
        truncated = len(output) > self._output_max_chars
        if truncated:
            output = output[: self._output_max_chars]
        latency_ms = (time.perf_counter() - started) * 1000
        return ToolResult(ok=True, output=output, truncated=truncated, latency_ms=latency_ms, value=value)

    def _provider_for(self, wanted: type[ToolContext]) -> BuildContext | None:
        """What builds a `wanted` context: its provider, else one of a narrower type (it is a `wanted` too)."""
        if wanted is ToolContext:
            return _same_context
        provider = self._providers.get(wanted)
        if provider is not None:
            return provider
        for supplied, candidate in self._providers.items():
            if issubclass(supplied, wanted):
                return candidate
        return None


def render(value: Any) -> str:
    """A tool's return value as the text the model reads: strings as they are, the rest as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return msgspec.json.encode(value).decode()


def _with_terminal(item: AnyTool, terminal: bool) -> AnyTool:
    if item.terminal == terminal:
        return item
    changed = copy.copy(item)
    changed.terminal = terminal
    return changed


def _same_context(context: ToolContext) -> ToolContext:
    return context


def _failure(message: str, started: float) -> ToolResult:
    return ToolResult(ok=False, error=message, latency_ms=(time.perf_counter() - started) * 1000)
