"""OTelRunObserver: a span per run (`invoke_agent`), per LLM call (`chat`) and per tool call (`execute_tool`).

Attributes follow the OpenTelemetry GenAI semantic conventions (gen_ai.operation.name,
gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.*, gen_ai.response.finish_reasons,
gen_ai.tool.name, gen_ai.tool.call.id, error.type). Steps are recorded once they are over, so their
spans are made afterwards with the step's own start and end times: the loop never waits for the SDK,
and a run's span is the parent of its steps'. A run accepted in a request that carried a
`traceparent` joins that trace.
"""

from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Final, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep

# AgentKit's provider names to the conventions' well-known gen_ai.provider.name values.
PROVIDER_NAMES: Final = {"openai": "openai", "gemini": "gcp.gemini"}
_MAX_OPEN: Final = 10_000  # runs accepted or running here whose span (or parent) is remembered


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


class OTelRunObserver(RunObserver):
    """Turns run changes and steps into GenAI spans on `tracer`.

    Args:
        tracer: Where spans go (the SDK's, exporting with OTLP/HTTP).
        agent_name: gen_ai.agent.name of every run.
    """

    def __init__(self, tracer: Tracer, *, agent_name: str = "agentkit") -> None:
        self._tracer = tracer
        self._agent = agent_name
        self._parents: OrderedDict[str, otel_context.Context] = OrderedDict()  # accepted, not started
        self._spans: OrderedDict[str, Span] = OrderedDict()  # running
        self._contexts: dict[str, otel_context.Context] = {}  # each running run's span as a parent

    def on_run(self, run: Run) -> None:
        """Remember the caller's context of an accepted run, start the run's span, end it with the run."""
        if run.status is RunStatus.PENDING:
            if run.id not in self._parents:
                _remember(self._parents, run.id, otel_context.get_current())
            return
        span = self._spans.get(run.id)
        if span is None:
            if run.status is not RunStatus.RUNNING and not run.is_terminal:
                return
            span = self._start_run_span(run)
        if run.is_terminal:
            self._end_run_span(span, run)
            self._spans.pop(run.id, None)
            self._contexts.pop(run.id, None)

    def on_step(self, step: Step) -> None:
        """A span for the step, child of its run's, with the step's own times.

        A run the sampler left out (OTEL_TRACES_SAMPLER) costs its steps nothing: no span is made.
        """
        parent = self._spans.get(step.run_id)
        if parent is not None:
            if not parent.is_recording():
                return
            ctx = self._contexts.get(step.run_id)
        else:
            ctx = self._parents.get(step.run_id)
        end = step.created_at
        start = end - timedelta(milliseconds=step.latency_ms)
        if isinstance(step, LLMStep):
            self._chat_span(step, ctx, start, end)
        else:
            assert isinstance(step, ToolStep)  # noqa: S101 - Step has two members
            self._tool_span(step, ctx, start, end)

    def _start_run_span(self, run: Run) -> Span:
        parent = self._parents.pop(run.id, None)
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self._agent,
            "agentkit.run.id": run.id,
            "agentkit.run.attempt": run.attempt,
        }
        if run.session_id is not None:
            attributes["gen_ai.conversation.id"] = run.session_id
        span = self._tracer.start_span(
            f"invoke_agent {self._agent}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(run.started_at or run.created_at),
        )
        if not run.is_terminal:
            _remember(self._spans, run.id, span)
            if len(self._contexts) >= _MAX_OPEN:
                self._contexts.clear()  # runs that ended elsewhere; their steps become roots
            self._contexts[run.id] = trace.set_span_in_context(span)
        return span

    def _end_run_span(self, span: Span, run: Run) -> None:
        if not span.is_recording():
            span.end()
            return
        span.set_attribute("gen_ai.usage.input_tokens", run.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", run.output_tokens)
        span.set_attribute("agentkit.run.status", run.status.value)
        if run.cost_usd is not None:
            span.set_attribute("agentkit.run.cost_usd", run.cost_usd)
        if run.status is not RunStatus.SUCCEEDED:
            span.set_attribute("error.type", run.status.value)
            span.set_status(Status(StatusCode.ERROR, run.failure_reason or run.status.value))
        span.end(end_time=_ns(run.finished_at) if run.finished_at else None)

    def _chat_span(self, step: LLMStep, ctx: otel_context.Context | None, start: datetime, end: datetime) -> None:
        prompt = step.prompt
        model = prompt.model if prompt is not None else ""
        attributes: dict[str, str | int | float | list[str]] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": step.usage.input_tokens,
            "gen_ai.usage.output_tokens": step.usage.output_tokens,
            "agentkit.step.no": step.step_no,
            "agentkit.llm.attempts": step.attempts,
        }
        if prompt is not None:
            attributes["gen_ai.provider.name"] = PROVIDER_NAMES.get(prompt.provider, prompt.provider)
            attributes["gen_ai.request.model"] = model
            for key, value in prompt.parameters.items():
                name = _REQUEST_PARAMETERS.get(key)
                if name is not None and isinstance(value, int | float):
                    attributes[name] = value
        if step.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [step.finish_reason.value]
        if step.response_id:
            attributes["gen_ai.response.id"] = step.response_id
        if step.response_model:
            attributes["gen_ai.response.model"] = step.response_model
        if step.cost_usd is not None:
            attributes["agentkit.llm.cost_usd"] = step.cost_usd
        span = self._tracer.start_span(
            f"chat {model}".rstrip(), context=ctx, kind=SpanKind.CLIENT, attributes=attributes, start_time=_ns(start)
        )
        if step.error is not None:
            span.set_attribute("error.type", step.error_type or "LLMError")
            span.set_status(Status(StatusCode.ERROR, step.error))
        span.end(end_time=_ns(end))

    def _tool_span(self, step: ToolStep, ctx: otel_context.Context | None, start: datetime, end: datetime) -> None:
        span = self._tracer.start_span(
            f"execute_tool {step.tool_name}",
            context=ctx,
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": step.tool_name,
                "gen_ai.tool.call.id": step.call_id,
                "gen_ai.tool.type": "function",
                "agentkit.step.no": step.step_no,
            },
            start_time=_ns(start),
        )
        if not step.result.ok:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, step.result.error or "the tool failed"))
        span.end(end_time=_ns(end))
