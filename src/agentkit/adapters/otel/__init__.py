"""OpenTelemetry GenAI spans of every run (the optional `agentkit[otel]` extra).

Import this package only when tracing is configured: it needs opentelemetry-sdk.
"""

from agentkit.adapters.otel.context import W3CTraceContext
from agentkit.adapters.otel.setup import otlp_tracer_provider
from agentkit.adapters.otel.spans import OTelRunObserver

__all__ = ["OTelRunObserver", "W3CTraceContext", "otlp_tracer_provider"]
