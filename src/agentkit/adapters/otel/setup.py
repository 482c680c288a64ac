"""The tracer provider: spans batched and exported with OTLP/HTTP (protobuf) to the configured endpoint."""

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def otlp_tracer_provider(endpoint: str, *, service_name: str, timeout_s: float = 10.0) -> TracerProvider:
    """A provider exporting to `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT, say `http://collector:4318`).

    As the OTLP specification says of the variable, the traces path `/v1/traces` is appended to it.
    Spans leave in batches from a thread of the SDK's own: the event loop never waits for the collector.
    """
    traces_url = endpoint.rstrip("/") + "/v1/traces"
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url, timeout=timeout_s)))
    return provider
