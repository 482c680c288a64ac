"""Metrics and OpenTelemetry over HTTP: /metrics parsed as Prometheus reads it, GenAI spans captured in memory
and, end to end, by an OTLP/HTTP receiver on loopback."""

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest
from dishka import Provider, Scope
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, Sampler
from prometheus_client.parser import text_string_to_metric_families

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.metrics import PrometheusMetrics, serve_metrics
from agentkit.adapters.otel import OTelRunObserver, W3CTraceContext
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, ToolCall, Usage
from agentkit.entrypoints.wiring.providers.observability import OtelTracing
from tests.http_fixtures import ApiFactory, headers

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


def calls(name: str, call_id: str = "c1", **arguments: Any) -> LLMResponse:
    return LLMResponse(
        tool_calls=(ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments),),
        usage=Usage(input_tokens=1000, output_tokens=100),
        attempts=3,  # two provider retries before this answer
        response_id="resp-1",
        finish_reason=FinishReason.TOOL_CALLS,
    )


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=1200, output_tokens=50))


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_metrics_count_runs_steps_tokens_cost_retries_and_tool_errors(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient(
        [calls("add", a=1, b=2), calls("lookup", "c2", city="Rome"), answer("done")],
        provider="openai",
        model="gpt-4o-mini",
    )
    api = await api_factory(llm=llm)
    await api.post("/v1/runs", json={"goal": "go"}, headers=headers())

    unauthenticated = await api.get("/metrics")
    response = await api.get("/metrics", headers=headers())

    assert unauthenticated.status_code == 401
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)
    assert found[("agentkit_runs_total", (("status", "succeeded"),))] == 1
    assert found[("agentkit_runs_accepted_total", ())] == 1
    assert found[("agentkit_runs_in_flight", ())] == 0
    assert found[("agentkit_runs_queued", ())] == 0
    assert found[("agentkit_run_duration_seconds_count", (("status", "succeeded"),))] == 1
    llm_labels = (("kind", "llm"), ("model", "gpt-4o-mini"), ("tool", ""))
    assert found[("agentkit_step_duration_seconds_count", llm_labels)] == 3
    assert found[("agentkit_step_duration_seconds_count", (("kind", "tool"), ("model", ""), ("tool", "add")))] == 1
    assert found[("agentkit_llm_tokens_total", (("direction", "input"), ("model", "gpt-4o-mini")))] == 3200
    assert found[("agentkit_llm_tokens_total", (("direction", "output"), ("model", "gpt-4o-mini")))] == 250
    assert found[("agentkit_llm_provider_retries_total", (("model", "gpt-4o-mini"),))] == 4
    assert found[("agentkit_tool_errors_total", (("tool", "lookup"),))] == 1
    assert found[("agentkit_llm_cost_usd_total", (("model", "gpt-4o-mini"),))] == pytest.approx(
        (3200 * 0.15 + 250 * 0.6) / 1e6
    )


async def test_metrics_on_their_own_address_leave_the_api(api_factory: ApiFactory) -> None:
    api = await api_factory([], metrics_bind="127.0.0.1:0")
    assert (await api.get("/metrics", headers=headers())).status_code == 404

    metrics = PrometheusMetrics()
    port, stop = serve_metrics(metrics, "127.0.0.1", 0)
    try:
        async with httpx.AsyncClient() as client:
            scraped = await client.get(f"http://127.0.0.1:{port}/metrics")
    finally:
        stop()
    assert ("agentkit_runs_in_flight", ()) in samples(scraped.text)


class InMemoryTracing(Provider):
    """OpenTelemetry on an in-memory exporter, in place of the OTLP one."""

    def __init__(self, exporter: InMemorySpanExporter, sampler: Sampler | None = None) -> None:
        super().__init__()
        provider = TracerProvider(sampler=sampler)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracing = OtelTracing(OTelRunObserver(provider.get_tracer("test")), W3CTraceContext())
        self.provide(lambda: tracing, provides=OtelTracing, scope=Scope.APP)


def by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in spans}


async def test_genai_spans_of_a_run_in_the_callers_trace(api_factory: ApiFactory) -> None:
    exporter = InMemorySpanExporter()
    llm = ScriptedLLMClient([calls("add", a=1, b=2), answer("3")], provider="openai", model="gpt-4o-mini")
    api = await api_factory(llm=llm, providers=[InMemoryTracing(exporter)])

    run = (
        await api.post(
            "/v1/runs",
            json={"goal": "1+2", "session_id": "s1"},
            headers=headers(traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01"),
        )
    ).json()

    spans = exporter.get_finished_spans()
    assert [span.name for span in spans] == [
        "chat gpt-4o-mini",
        "execute_tool add",
        "chat gpt-4o-mini",
        "invoke_agent agentkit",
    ]
    agent = by_name(spans)["invoke_agent agentkit"]
    assert agent.context is not None
    assert agent.parent is not None
    assert format(agent.context.trace_id, "032x") == TRACE_ID
    assert format(agent.parent.span_id, "016x") == PARENT_ID
    assert agent.attributes is not None
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.conversation.id"] == "s1"
    assert agent.attributes["agentkit.run.id"] == run["id"]
    chat = spans[0]
    assert chat.parent is not None
    assert chat.parent.span_id == agent.context.span_id
    assert chat.attributes is not None
    assert (
        dict(chat.attributes).items()
        >= {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 100,
            "gen_ai.response.id": "resp-1",
        }.items()
    )
    assert tuple(chat.attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)  # type: ignore[arg-type]
    tool_span = spans[1]
    assert tool_span.attributes is not None
    assert tool_span.attributes["gen_ai.tool.name"] == "add"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool_span.start_time is not None
    assert chat.end_time is not None
    assert agent.start_time is not None
    assert agent.end_time is not None
    assert agent.start_time <= chat.start_time <= chat.end_time <= tool_span.start_time  # type: ignore[operator]
    assert tool_span.end_time is not None
    assert tool_span.end_time <= agent.end_time


async def test_a_failed_tool_and_a_failed_run_carry_error_type(api_factory: ApiFactory) -> None:
    exporter = InMemorySpanExporter()
    api = await api_factory([calls("lookup", city="Rome")], providers=[InMemoryTracing(exporter)])

    run = (await api.post("/v1/runs", json={"goal": "weather"}, headers=headers())).json()

    assert run["status"] == "failed"  # the script ran out after the tool call
    spans = by_name(exporter.get_finished_spans())
    tool_attributes = spans["execute_tool lookup"].attributes
    assert tool_attributes is not None
    assert tool_attributes["error.type"] == "tool_error"
    failed_chat = spans["chat script"]
    assert failed_chat.attributes is not None
    assert failed_chat.attributes["error.type"] == "LLMRequestError"
    agent = spans["invoke_agent agentkit"]
    assert agent.attributes is not None
    assert agent.attributes["error.type"] == "failed"
    assert agent.status.status_code.name == "ERROR"


async def test_a_run_the_sampler_leaves_out_makes_no_spans(api_factory: ApiFactory) -> None:
    exporter = InMemorySpanExporter()
    api = await api_factory([calls("add", a=1, b=2), answer("3")], providers=[InMemoryTracing(exporter, ALWAYS_OFF)])

    run = (await api.post("/v1/runs", json={"goal": "1+2"}, headers=headers())).json()

    assert run["status"] == "succeeded"
    assert exporter.get_finished_spans() == ()


class Collector(BaseHTTPRequestHandler):
    """A tiny OTLP/HTTP receiver: keeps every ExportTraceServiceRequest posted to /v1/traces."""

    received: list[ExportTraceServiceRequest]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        type(self).received.append((self.path, self.headers["Content-Type"], request))  # type: ignore[arg-type]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def collector() -> Iterator[tuple[str, list[Any]]]:
    received: list[Any] = []
    handler = type("Handler", (Collector,), {"received": received})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", received
    finally:
        server.shutdown()
        server.server_close()


async def test_spans_reach_an_otlp_http_receiver(api_factory: ApiFactory, collector: tuple[str, list[Any]]) -> None:
    endpoint, received = collector
    api = await api_factory([calls("add", a=1, b=2), answer("3")], otel_exporter_otlp_endpoint=endpoint)
    await api.post("/v1/runs", json={"goal": "1+2"}, headers=headers(traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01"))

    await api.__aexit__(None, None, None)  # closing the container flushes the batch

    assert received, "the receiver got nothing"
    path, content_type, _ = received[0]
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    spans = [
        span
        for _, _, request in received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(span.name for span in spans) == [
        "chat script",
        "chat script",
        "execute_tool add",
        "invoke_agent agentkit",
    ]
    assert {span.trace_id.hex() for span in spans} == {TRACE_ID}
    service = {
        attribute.value.string_value
        for _, _, request in received
        for resource in request.resource_spans
        for attribute in resource.resource.attributes
        if attribute.key == "service.name"
    }
    assert service == {"agentkit"}
