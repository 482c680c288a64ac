"""OTelRunObserver makes its spans finished, without the SDK's start_span: what it exports must be what the
SDK's own spans would have been (names, kinds, ids, parents, times, attributes, statuses, flags, state)."""

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agentkit.adapters.otel import OTelRunObserver
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.messages import FinishReason, ToolCall, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, PromptRef, Step, ToolStep
from agentkit.domain.tools import ToolResult

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
RUN = Run(
    id=RunId("run-1"),
    owner=OwnerId("o"),
    goal="g",
    session_id=SessionId("s1"),
    created_at=T0,
    attempt=1,
)
PROMPT = PromptRef(message_count=2, provider="gemini", model="gemini-2.5-flash", parameters={"temperature": 0.2})


class SeededIds(IdGenerator):
    """The same ids, in the same order, for the observer and for the reference."""

    def __init__(self) -> None:
        self._traces = random.Random(1)
        self._spans = random.Random(2)

    def generate_trace_id(self) -> int:
        return self._traces.getrandbits(128)

    def generate_span_id(self) -> int:
        return self._spans.getrandbits(64)


def steps() -> list[Step]:
    chat = LLMStep(
        run_id=RUN.id,
        step_no=1,
        created_at=T0 + timedelta(seconds=1),
        latency_ms=250,
        usage=Usage(input_tokens=100, output_tokens=20, cache_read_tokens=60, cache_write_tokens=30),
        tool_calls=(ToolCall(id=ToolCallId("c1"), name="lookup", arguments={}),),
        finish_reason=FinishReason.TOOL_CALLS,
        prompt=PROMPT,
        response_id="resp-1",
        response_model="gemini-2.5-flash-001",
        cost_usd=0.0001,
    )
    tool = ToolStep(
        run_id=RUN.id,
        step_no=2,
        created_at=T0 + timedelta(seconds=2),
        latency_ms=500,
        call_id=ToolCallId("c1"),
        tool_name="lookup",
        arguments={},
        result=ToolResult(ok=False, error="no such city"),
        # it waited for a place among its turn's calls: its start is not its end less its latency
        started_at=T0 + timedelta(seconds=1, milliseconds=300),
    )
    failed = LLMStep(
        run_id=RUN.id,
        step_no=3,
        created_at=T0 + timedelta(seconds=3),
        latency_ms=125,
        error="the provider is down",
        error_type="LLMUnavailable",
        attempts=3,
        prompt=PROMPT,
    )
    return [chat, tool, failed]


def ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def reference(tracer: trace.Tracer, parent: otel_context.Context | None, ended: Run) -> None:
    """The same run made with the SDK's own start_span and end, as a tracer's user would."""
    run_span = tracer.start_span(
        "invoke_agent agentkit",
        context=parent,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "agentkit",
            "agentkit.run.id": RUN.id,
            "agentkit.run.attempt": 1,
            "gen_ai.conversation.id": "s1",
        },
        start_time=ns(T0),
    )
    under = trace.set_span_in_context(run_span)
    chat, tool, failed = steps()
    made: list[tuple[Step, str, SpanKind, dict[str, Any], Status | None]] = [
        (
            chat,
            "chat gemini-2.5-flash",
            SpanKind.CLIENT,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 20,
                "agentkit.step.no": 1,
                "agentkit.llm.attempts": 1,
                "gen_ai.usage.cache_read.input_tokens": 60,
                "gen_ai.usage.cache_creation.input_tokens": 30,
                "gen_ai.provider.name": "gcp.gemini",
                "gen_ai.request.model": "gemini-2.5-flash",
                "gen_ai.request.temperature": 0.2,
                "gen_ai.response.finish_reasons": ["tool_calls"],
                "gen_ai.response.id": "resp-1",
                "gen_ai.response.model": "gemini-2.5-flash-001",
                "agentkit.llm.cost_usd": 0.0001,
            },
            None,
        ),
        (
            tool,
            "execute_tool lookup",
            SpanKind.INTERNAL,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.type": "function",
                "agentkit.step.no": 2,
                "error.type": "tool_error",
            },
            Status(StatusCode.ERROR, "no such city"),
        ),
        (
            failed,
            "chat gemini-2.5-flash",
            SpanKind.CLIENT,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 0,
                "gen_ai.usage.output_tokens": 0,
                "agentkit.step.no": 3,
                "agentkit.llm.attempts": 3,
                "gen_ai.provider.name": "gcp.gemini",
                "gen_ai.request.model": "gemini-2.5-flash",
                "gen_ai.request.temperature": 0.2,
                "error.type": "LLMUnavailable",
            },
            Status(StatusCode.ERROR, "the provider is down"),
        ),
    ]
    for step, name, kind, attributes, status in made:
        end = ns(step.created_at)
        start = end - int(step.latency_ms * 1e6)
        if isinstance(step, ToolStep) and step.started_at is not None:
            start = ns(step.started_at)
        span = tracer.start_span(name, context=under, kind=kind, attributes=attributes, start_time=start)
        if status is not None:
            span.set_status(status)
        span.end(end_time=end)
    run_span.set_attribute("gen_ai.usage.input_tokens", 100)
    run_span.set_attribute("gen_ai.usage.output_tokens", 20)
    run_span.set_attribute("agentkit.run.status", "failed")
    run_span.set_attribute("agentkit.run.cost_usd", 0.0001)
    run_span.set_attribute("error.type", "failed")
    run_span.set_status(Status(StatusCode.ERROR, "the LLM call failed"))
    run_span.end(end_time=ns(T0 + timedelta(seconds=4)))


def observed(tracer: trace.Tracer, parent: otel_context.Context | None, ended: Run) -> None:
    """The run as the loop reports it to the observer."""
    observer = OTelRunObserver(tracer)
    token = otel_context.attach(parent or otel_context.Context())
    try:
        observer.on_run(RUN)  # accepted: the request's context is remembered
    finally:
        otel_context.detach(token)
    observer.on_run(running())
    for step in steps():
        observer.on_step(step)
    observer.on_run(ended)


def running() -> Run:
    return msgspec.structs.replace(RUN, status=RunStatus.RUNNING, started_at=T0)


def ended_run() -> Run:
    return msgspec.structs.replace(
        running(),
        status=RunStatus.FAILED,
        failure_reason="the LLM call failed",
        input_tokens=100,
        output_tokens=20,
        cost_usd=0.0001,
        finished_at=T0 + timedelta(seconds=4),
    )


def exported(make: Any, traceparent: str | None, limits: SpanLimits | None) -> tuple[ReadableSpan, ...]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=SeededIds(), span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent = None
    if traceparent is not None:
        carrier = {"traceparent": traceparent, "tracestate": "vendor=1"}
        parent = TraceContextTextMapPropagator().extract(carrier)
    make(provider.get_tracer("agentkit"), parent, ended_run())
    return exporter.get_finished_spans()


def shape(span: ReadableSpan) -> tuple[Any, ...]:
    attributes = {
        key: tuple(value) if isinstance(value, list | tuple) else value
        for key, value in (span.attributes or {}).items()
    }
    return (
        span.name,
        span.kind,
        span.context,
        span.parent,
        attributes,
        span.dropped_attributes,
        span.status.status_code,
        span.status.description,
        span.start_time,
        span.end_time,
        span.resource,
        span.instrumentation_scope,
        tuple(span.events),
        tuple(span.links),
    )


@pytest.mark.parametrize(
    ("traceparent", "limits"),
    [
        (None, None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", None),
        (None, SpanLimits(max_span_attributes=4, max_span_attribute_length=5)),
    ],
    ids=["root", "sampled-caller", "unsampled-caller", "narrow-limits"],
)
def test_the_spans_are_those_the_sdk_would_make(traceparent: str | None, limits: SpanLimits | None) -> None:
    expected = exported(reference, traceparent, limits)
    got = exported(observed, traceparent, limits)

    assert [shape(span) for span in got] == [shape(span) for span in expected]
    if traceparent is not None and traceparent.endswith("-00"):
        assert got == ()  # the caller's trace is not sampled: neither is the run
    else:
        assert [span.name for span in got] == [
            "chat gemini-2.5-flash",
            "execute_tool lookup",
            "chat gemini-2.5-flash",
            "invoke_agent agentkit",
        ]


def test_with_the_sdk_disabled_the_observer_makes_no_spans_and_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = OTelRunObserver(provider.get_tracer("agentkit"))  # the API's no-op tracer

    observer.on_run(RUN)
    observer.on_run(running())
    for step in steps():
        observer.on_step(step)
    observer.on_run(ended_run())

    assert exporter.get_finished_spans() == ()
