"""Refuse new runs at the door while every place is taken, before the framework does any work for them.

Under overload most requests are refused, so what a refusal costs decides how much of the process
is left for the runs it accepted. Through the whole stack (dishka's request scope, routing, the
guard, body parsing, the exception handlers) a refusal cost 1.3 ms of CPU, a third of a whole run;
answered here it costs what uvicorn's HTTP parsing costs, 0.5 ms (docs/benchmarks.md, "Overload").
SubmitRun still reserves the place: this is only an early refusal when none is free.
"""

import time
from collections.abc import Awaitable, Callable

import msgspec
import structlog
from litestar.enums import ScopeType
from litestar.types import (
    ASGIApp,
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    HTTPScope,
    Receive,
    ReceiveMessage,
    Scope,
    Send,
)

from agentkit.application.errors import Overloaded
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.runs.submit_run import OVERLOADED_RETRY_AFTER_S
from agentkit.entrypoints.http.auth import API_KEY_HEADER, ApiKeys
from agentkit.entrypoints.http.auth_throttle import FailedKeyThrottle, client_address
from agentkit.entrypoints.http.middleware import request_id_of
from agentkit.entrypoints.http.problems import OVERLOADED_TITLE, PROBLEM_JSON, problem_details, retry_after

logger = structlog.get_logger(__name__)

RUNS_PATH = "/v1/runs"
LOG_EVERY_S = 10.0
_KEY_HEADER = API_KEY_HEADER.lower().encode()


def shed_when_full(
    app: ASGIApp,
    *,
    admission: Callable[[], Awaitable[RunAdmission]],
    keys: ApiKeys,
    throttle: FailedKeyThrottle,
    monotonic: Callable[[], float] = time.monotonic,
) -> ASGIApp:
    """Wrap the app: `POST /v1/runs` gets the use-case's own 503 at once while no place is free.

    Only a request the full stack would refuse the same way: one with a valid API key, from an
    address that is not throttled (the door must not answer for keys it has not accepted, or tell a
    throttled address a right key from a wrong one), and without an Idempotency-Key (it may be a
    replay, which the cap never refuses). Everything else goes on to the app. The body is read, so
    the connection stays usable. Refusals are logged as a count every LOG_EVERY_S seconds, not one
    line each: under overload, a line per refusal is load too.

    Args:
        app: The application.
        admission: Gives the admission count (resolved on the first POST: the container is async).
        keys: The configured API keys.
        throttle: Failed-key throttling per client address.
        monotonic: The clock of the log summary.
    """
    body = msgspec.json.encode(
        problem_details(
            503,
            Overloaded.code,
            OVERLOADED_TITLE,
            str(Overloaded(OVERLOADED_RETRY_AFTER_S)),
            instance=RUNS_PATH,
        )
    )
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", retry_after(OVERLOADED_RETRY_AFTER_S).encode()),
    ]
    found: list[RunAdmission] = []
    refused = _RefusalLog(monotonic)

    async def door(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and _creates_a_run(scope):
            if not found:
                found.append(await admission())
            if not found[0].has_room() and _refused_the_same_way(scope, keys, throttle):
                await _drain(receive)
                start: HTTPResponseStartEvent = {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [*headers, (b"x-request-id", request_id_of(scope).encode())],
                }
                end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
                await send(start)
                await send(end)
                refused.one()
                return
        await app(scope, receive, send)

    return door


def _creates_a_run(scope: HTTPScope) -> bool:
    return scope["method"] == "POST" and scope["path"].rstrip("/") == RUNS_PATH


def _refused_the_same_way(scope: HTTPScope, keys: ApiKeys, throttle: FailedKeyThrottle) -> bool:
    """A valid key, an address that is not throttled, no Idempotency-Key: the use-case would say 503."""
    presented: bytes | None = None
    for name, value in scope["headers"]:
        if name == b"idempotency-key":
            return False
        if name == _KEY_HEADER:
            presented = value
    if presented is None or not keys.valid(presented.decode("latin-1")):
        return False
    client = scope.get("client")
    return not throttle.throttled(client_address(client[0] if client else None))


async def _drain(receive: Receive) -> None:
    message: ReceiveMessage = await receive()
    while message.get("more_body", False):
        message = await receive()


class _RefusalLog:
    """Counts refusals; logs the count at most once every LOG_EVERY_S seconds."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._count = 0
        self._logged_at: float | None = None

    def one(self) -> None:
        self._count += 1
        now = self._monotonic()
        if self._logged_at is None or now - self._logged_at >= LOG_EVERY_S:
            since = now if self._logged_at is None else self._logged_at
            logger.warning("runs_refused_overloaded", refused=self._count, over_s=round(now - since, 1))
            self._count, self._logged_at = 0, now
