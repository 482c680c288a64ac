"""Request ids, access logs, and the caller's trace context."""

import re
import time
import uuid
from collections.abc import Awaitable, Callable

import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from agentkit.application.ports.trace_context import TraceContext

logger = structlog.get_logger("agentkit.access")
_VALID_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def request_id_of(scope: Scope) -> str:
    """The caller's X-Request-ID when it is sane, else a new one."""
    incoming = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), "")
    return incoming if _VALID_ID.match(incoming) else uuid.uuid4().hex


def request_context(app: ASGIApp) -> ASGIApp:
    """Give each request an id (the caller's X-Request-ID when sane), echo it, log one access line."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        tokens = structlog.contextvars.bind_contextvars(request_id=request_id)
        try:
            await app(scope, receive, send_with_id)
        finally:
            logger.info(
                "request",
                method=scope.get("method"),
                path=scope["path"],
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
            )
            structlog.contextvars.reset_contextvars(**tokens)

    return middleware


def trace_context(app: ASGIApp, context: Callable[[], Awaitable[TraceContext]]) -> ASGIApp:
    """Handle a request that carries a W3C `traceparent` inside the trace it names.

    A run accepted by such a request joins the caller's trace. Requests without one pass straight
    through; `context` (the container's TraceContext) is looked up once, at the first that has one.
    """
    found: list[TraceContext] = []

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        traceparent = tracestate = None
        for key, value in scope["headers"]:
            if key == b"traceparent":
                traceparent = value.decode("latin-1")
            elif key == b"tracestate":
                tracestate = value.decode("latin-1")
        if traceparent is None:
            await app(scope, receive, send)
            return
        if not found:
            found.append(await context())
        token = found[0].enter(traceparent, tracestate)
        try:
            await app(scope, receive, send)
        finally:
            found[0].leave(token)

    return middleware
