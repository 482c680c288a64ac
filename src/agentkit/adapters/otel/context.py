"""W3CTraceContext: an incoming `traceparent` made the current OpenTelemetry context."""

from opentelemetry import context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agentkit.application.ports.trace_context import TraceContext

_propagator = TraceContextTextMapPropagator()


class W3CTraceContext(TraceContext):
    """Attaches the context a `traceparent` (and `tracestate`) header carries; an invalid one is ignored."""

    def enter(self, traceparent: str, tracestate: str | None) -> object:
        """Attach the extracted context; the token restores the one before."""
        carrier = {"traceparent": traceparent}
        if tracestate:
            carrier["tracestate"] = tracestate
        return context.attach(_propagator.extract(carrier))

    def leave(self, token: object) -> None:
        """Detach what `enter` attached."""
        context.detach(token)  # type: ignore[arg-type]
