"""The TraceContext port: continue a caller's distributed trace (W3C `traceparent`)."""

from abc import abstractmethod
from typing import Protocol


class TraceContext(Protocol):
    """Makes an incoming request's trace context current while the request is handled.

    A run accepted meanwhile joins the caller's trace: its spans become children of the caller's.
    """

    @abstractmethod
    def enter(self, traceparent: str, tracestate: str | None) -> object:
        """Make the context these headers carry current; return a token for `leave`."""

    @abstractmethod
    def leave(self, token: object) -> None:
        """Restore the context from before `enter`."""


class NoTraceContext(TraceContext):
    """Tracing is off: nothing to continue."""

    def enter(self, traceparent: str, tracestate: str | None) -> object:
        """Nothing."""
        return None

    def leave(self, token: object) -> None:
        """Nothing."""
