"""OTelRunObserver: a span per run (`invoke_agent`), per LLM call (`chat`) and per tool call (`execute_tool`).

Attributes follow the OpenTelemetry GenAI semantic conventions (gen_ai.operation.name,
gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.*, gen_ai.response.finish_reasons,
gen_ai.tool.name, gen_ai.tool.call.id, error.type). Steps are recorded once they are over, so their
spans are made afterwards with the step's own start and end times: the loop never waits for the SDK,
and a run's span is the parent of its steps'. A run accepted in a request that carried a
`traceparent` joins that trace.

Every span is already over when it is made, so it is made finished: the observer takes the SDK
tracer's sampler, id generator, resource, limits and span processor and hands the processor each
span as the SDK's own `span.end()` would, but without building a live span first (the SDK's
`start_span` validates every attribute and takes locks: about 30 µs per span here, against 5 µs
with the processor's share; see docs/benchmarks.md).
What is exported is what the SDK would export: the same names, kinds, parents, times, attributes,
statuses, trace flags and trace state. Two differences, neither visible to an exporter: the span
processors' `on_start` is not called (the batch processor the service uses does nothing there),
and the sampler is asked once per run for its steps' spans, whose parent and trace id are the same
for all of them (the samplers of the SDK decide by those alone).
"""

import time
from collections import OrderedDict
from datetime import datetime
from typing import Any, Final, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import Tracer as SdkTracer
from opentelemetry.trace import (
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
    TraceState,
)

from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep

# AgentKit's provider names to the conventions' well-known gen_ai.provider.name values.
PROVIDER_NAMES: Final = {
    "openai": "openai",
    "gemini": "gcp.gemini",
    "anthropic": "anthropic",
    "azure_openai": "azure.ai.openai",
}
_MAX_OPEN: Final = 10_000  # runs accepted or running here whose span (or parent) is remembered
_MOST_ATTRIBUTES: Final = 18  # no span of ours has more: limits at least this wide change nothing
_UNSET: Final = Status(StatusCode.UNSET)


# The providers' parameter names to the conventions' request attributes.
_REQUEST_PARAMETERS: Final = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
}
_T = TypeVar("_T")


def _remember(table: "OrderedDict[str, _T]", key: str, value: _T) -> None:
    table[key] = value
    if len(table) > _MAX_OPEN:
        table.popitem(last=False)


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


class _Origin:
    """Where a span goes in its trace: its trace id, parent, flags and state, as the sampler decided."""

    __slots__ = ("flags", "parent", "recording", "trace_id", "trace_state")

    def __init__(
        self,
        trace_id: int,
        parent: SpanContext | None,
        flags: TraceFlags,
        trace_state: TraceState | None,
        *,
        recording: bool,
    ) -> None:
        self.trace_id = trace_id
        self.parent = parent
        self.flags = flags
        self.trace_state = trace_state
        self.recording = recording


class _RunSpan:
    """A run's span while the run executes: made (and handed to the processor) when the run ends."""

    __slots__ = ("attributes", "children", "context", "origin", "start_ns")

    def __init__(self, context: SpanContext, origin: _Origin, attributes: dict[str, Any], start_ns: int) -> None:
        self.context = context
        self.origin = origin
        self.attributes = attributes
        self.start_ns = start_ns
        self.children: _Origin | None = None  # the sampler's decision for the run's steps, once asked


class _FinishedSpans:
    """Makes finished spans as the SDK tracer `tracer` would, and hands them to its span processor."""

    def __init__(self, tracer: SdkTracer) -> None:
        self._tracer = tracer
        self._sampler = tracer.sampler
        self._ids = tracer.id_generator
        self._processor = tracer.span_processor
        self._info = tracer.instrumentation_info
        # not public in the SDK, and read as its own start_span reads them
        self._scope = tracer._instrumentation_scope
        limits = tracer._span_limits
        self._exact = (limits.max_span_attributes or 0) >= _MOST_ATTRIBUTES and limits.max_span_attribute_length is None
        self._limits = limits

    def origin(
        self,
        parent: otel_context.Context | None,
        name: str,
        kind: SpanKind,
        attributes: dict[str, Any],
    ) -> tuple[_Origin, dict[str, Any]]:
        """Ask the sampler about a span under `parent` (as start_span does); the attributes it keeps."""
        parent_span: SpanContext | None = trace.get_current_span(parent).get_span_context()
        if not self._tracer._is_enabled():
            return _Origin(0, None, TraceFlags(TraceFlags.DEFAULT), None, recording=False), attributes
        if parent_span is None or not parent_span.is_valid:
            parent_span = None
            trace_id = self._ids.generate_trace_id()
            random_trace_id = self._ids.is_trace_id_random()
        else:
            trace_id = parent_span.trace_id
            random_trace_id = parent_span.trace_flags.random_trace_id
        result = self._sampler.should_sample(parent, trace_id, name, kind, attributes, ())
        decision = result.decision
        flags = TraceFlags.SAMPLED if decision.is_sampled() else TraceFlags.DEFAULT  # type: ignore[no-untyped-call]
        if random_trace_id:
            flags |= TraceFlags.RANDOM_TRACE_ID
        origin = _Origin(
            trace_id,
            parent_span,
            TraceFlags(flags),
            result.trace_state,
            recording=decision.is_recording(),  # type: ignore[no-untyped-call]
        )
        return origin, dict(result.attributes)

    def context(self, origin: _Origin) -> SpanContext:
        """A new span's context at `origin`."""
        return SpanContext(
            origin.trace_id,
            self._ids.generate_span_id(),
            is_remote=False,
            trace_flags=origin.flags,
            trace_state=origin.trace_state,
        )

    def child_origin(self, run: _RunSpan, name: str, kind: SpanKind, attributes: dict[str, Any]) -> _Origin:
        """The sampler's decision for the run's steps, asked on the first of them."""
        if run.children is None:
            parent = trace.set_span_in_context(NonRecordingSpan(run.context))
            run.children, _ = self.origin(parent, name, kind, attributes)
        return run.children

    def finish(
        self,
        name: str,
        context: SpanContext,
        origin: _Origin,
        kind: SpanKind,
        attributes: dict[str, Any],
        start_ns: int,
        end_ns: int,
        status: Status = _UNSET,
    ) -> None:
        """Hand the finished span to the processor (as `span.end()` does)."""
        kept: Any = attributes
        if not self._exact:  # limits narrower than the defaults: the SDK's own bounding
            limits = self._limits
            kept = BoundedAttributes(
                limits.max_span_attributes, attributes, immutable=True, max_value_len=limits.max_span_attribute_length
            )
        self._processor.on_end(
            ReadableSpan(
                name=name,
                context=context,
                parent=origin.parent,
                resource=self._tracer.resource,
                attributes=kept,
                kind=kind,
                status=status,
                start_time=start_ns,
                end_time=end_ns,
                instrumentation_info=self._info,
                instrumentation_scope=self._scope,
            )
        )


class OTelRunObserver(RunObserver):
    """Turns run changes and steps into GenAI spans on `tracer`.

    Args:
        tracer: Where spans go: the SDK's tracer (its provider exports with OTLP/HTTP). Any other
            (the API's no-op tracer, which the SDK hands out under OTEL_SDK_DISABLED=true) makes
            the observer make no spans at all.
        agent_name: gen_ai.agent.name of a run of the `default` agent; a run of another agent
            (AGENTS_FILE) is named by its agent, the one it ends with when it was handed off.
    """

    def __init__(self, tracer: Tracer, *, agent_name: str = "agentkit") -> None:
        self._spans = _FinishedSpans(tracer) if isinstance(tracer, SdkTracer) else None
        self._agent = agent_name
        self._run_name = f"invoke_agent {agent_name}"
        self._parents: OrderedDict[str, otel_context.Context] = OrderedDict()  # accepted, not started
        self._runs: OrderedDict[str, _RunSpan | None] = OrderedDict()  # running (None: not recorded)

    def on_run(self, run: Run) -> None:
        """Remember the caller's context of an accepted run, start the run's span, end it with the run."""
        spans = self._spans
        if spans is None:
            return
        if run.status is RunStatus.PENDING:
            if run.id not in self._parents:
                _remember(self._parents, run.id, otel_context.get_current())
            return
        if run.id in self._runs:
            span = self._runs[run.id]
        elif run.status is RunStatus.RUNNING or run.is_terminal:
            span = self._start_run_span(spans, run)
        else:
            return
        if run.is_terminal:
            self._runs.pop(run.id, None)
            if span is not None:
                self._end_run_span(spans, span, run)

    def on_step(self, step: Step) -> None:
        """A span for the step, child of its run's, with the step's own times.

        A run the sampler left out (OTEL_TRACES_SAMPLER) costs its steps nothing: no span is made.
        """
        spans = self._spans
        if spans is None:
            return
        run = None
        if step.run_id in self._runs:
            run = self._runs[step.run_id]
            if run is None:
                return  # the sampler left the run out
        if isinstance(step, LLMStep):
            name, kind, attributes, status = _chat(step)
        else:
            assert isinstance(step, ToolStep)  # noqa: S101 - Step has two members
            name, kind, attributes, status = _tool(step)
        if run is not None:  # under its run's span
            origin = spans.child_origin(run, name, kind, attributes)
        else:  # the run is not running here: under its caller's context, if it was accepted here
            origin, attributes = spans.origin(self._parents.get(step.run_id), name, kind, attributes)
        if origin.recording:
            end = _ns(step.created_at)
            # a tool call knows when it started (the calls of a turn overlap); an LLM call, its latency
            started_at = step.started_at if isinstance(step, ToolStep) else None
            start = end - int(step.latency_ms * 1_000_000) if started_at is None else _ns(started_at)
            spans.finish(name, spans.context(origin), origin, kind, attributes, start, end, status)

    def _start_run_span(self, spans: _FinishedSpans, run: Run) -> _RunSpan | None:
        parent = self._parents.pop(run.id, None)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self._agent_of(run),
            "agentkit.run.id": run.id,
            "agentkit.run.attempt": run.attempt,
        }
        if run.session_id is not None:
            attributes["gen_ai.conversation.id"] = run.session_id
        origin, attributes = spans.origin(parent, self._name_of(run), SpanKind.INTERNAL, attributes)
        span = None
        if origin.recording:
            span = _RunSpan(spans.context(origin), origin, attributes, _ns(run.started_at or run.created_at))
        if not run.is_terminal:
            _remember(self._runs, run.id, span)
        return span

    def _end_run_span(self, spans: _FinishedSpans, span: _RunSpan, run: Run) -> None:
        attributes = span.attributes
        attributes["gen_ai.usage.input_tokens"] = run.input_tokens
        attributes["gen_ai.usage.output_tokens"] = run.output_tokens
        attributes["agentkit.run.status"] = run.status.value
        attributes["gen_ai.agent.name"] = self._agent_of(run)  # a handoff changed it
        if run.parent_run_id is not None:
            attributes["agentkit.run.parent_id"] = run.parent_run_id
        if run.cost_usd is not None:
            attributes["agentkit.run.cost_usd"] = run.cost_usd
        status = _UNSET
        if run.status is not RunStatus.SUCCEEDED:
            attributes["error.type"] = run.status.value
            status = Status(StatusCode.ERROR, run.failure_reason or run.status.value)
        end = _ns(run.finished_at) if run.finished_at else time.time_ns()
        spans.finish(
            self._name_of(run), span.context, span.origin, SpanKind.INTERNAL, attributes, span.start_ns, end, status
        )

    def _agent_of(self, run: Run) -> str:
        return self._agent if run.agent == "default" else run.agent

    def _name_of(self, run: Run) -> str:
        return self._run_name if run.agent == "default" else f"invoke_agent {run.agent}"


def _chat(step: LLMStep) -> tuple[str, SpanKind, dict[str, Any], Status]:
    """An LLM step's span: name, kind, attributes, status."""
    prompt = step.prompt
    model = prompt.model if prompt is not None else ""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": step.usage.input_tokens,
        "gen_ai.usage.output_tokens": step.usage.output_tokens,
        "agentkit.step.no": step.step_no,
        "agentkit.llm.attempts": step.attempts,
    }
    # parts of input_tokens, as the conventions count them; only where the provider's cache served
    if step.usage.cache_read_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = step.usage.cache_read_tokens
    if step.usage.cache_write_tokens:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = step.usage.cache_write_tokens
    if prompt is not None:
        attributes["gen_ai.provider.name"] = PROVIDER_NAMES.get(prompt.provider, prompt.provider)
        attributes["gen_ai.request.model"] = model
        for key, value in prompt.parameters.items():
            name = _REQUEST_PARAMETERS.get(key)
            if name is not None and isinstance(value, int | float):
                attributes[name] = value
    if step.finish_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = (step.finish_reason.value,)
    if step.response_id:
        attributes["gen_ai.response.id"] = step.response_id
    if step.response_model:
        attributes["gen_ai.response.model"] = step.response_model
    if step.cost_usd is not None:
        attributes["agentkit.llm.cost_usd"] = step.cost_usd
    status = _UNSET
    if step.error is not None:
        attributes["error.type"] = step.error_type or "LLMError"
        status = Status(StatusCode.ERROR, step.error)
    return f"chat {model}".rstrip(), SpanKind.CLIENT, attributes, status


def _tool(step: ToolStep) -> tuple[str, SpanKind, dict[str, Any], Status]:
    """A tool step's span: name, kind, attributes, status."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": step.tool_name,
        "gen_ai.tool.call.id": step.call_id,
        "gen_ai.tool.type": "function",
        "agentkit.step.no": step.step_no,
    }
    status = _UNSET
    if not step.result.ok:
        attributes["error.type"] = "tool_error"
        status = Status(StatusCode.ERROR, step.result.error or "the tool failed")
    return f"execute_tool {step.tool_name}", SpanKind.INTERNAL, attributes, status
