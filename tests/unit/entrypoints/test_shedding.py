"""The door: while no place is free, POST /v1/runs with a valid key is refused before the app sees it."""

from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from structlog.testing import capture_logs

from agentkit.adapters.memory import FixedClock, InMemoryRateLimiter
from agentkit.application.errors import AuthThrottled
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.entrypoints.http.auth import ApiKeys
from agentkit.entrypoints.http.auth_throttle import FailedKeyThrottle
from agentkit.entrypoints.http.shedding import shed_when_full

KEY = "key-" + "k" * 20


class FixedAdmission(RunAdmission):
    """Room or none, as the test says."""

    def __init__(self, *, room: bool) -> None:
        self.room = room

    def try_reserve(self) -> bool:
        return self.room

    def release(self) -> None:
        pass

    def has_room(self) -> bool:
        return self.room


class Door:
    """The door in front of an app that records what reached it."""

    def __init__(self, *, room: bool) -> None:
        self.admission = FixedAdmission(room=room)
        self.clock = FixedClock()
        self.throttle = FailedKeyThrottle(limit_per_min=1, monotonic=self.clock.monotonic)
        self.reached: list[str] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            self.reached.append(scope["path"])

        async def admission() -> RunAdmission:
            return self.admission

        self.asgi = shed_when_full(
            app, admission=admission, keys=ApiKeys([KEY]), throttle=self.throttle, monotonic=self.clock.monotonic
        )

    async def post(
        self,
        path: str = "/v1/runs",
        *,
        headers: Sequence[tuple[bytes, bytes]] = ((b"x-api-key", KEY.encode()),),
        chunks: Sequence[bytes] = (b'{"goal": ', b'"x"}'),
        client: str = "10.0.0.1",
        method: str = "POST",
    ) -> tuple[list[dict[str, Any]], list[bytes]]:
        """The messages the door sent, and the body chunks nobody read."""
        unread = list(chunks)
        sent: list[dict[str, Any]] = []

        async def receive() -> Any:
            chunk = unread.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(unread)}

        async def send(message: Any) -> None:
            sent.append(message)

        scope: Any = {"type": "http", "method": method, "path": path, "headers": list(headers)}
        scope["client"] = (client, 5000)
        await self.asgi(scope, receive, send)
        return sent, unread


async def test_with_no_place_free_a_valid_request_is_refused_at_the_door_and_its_body_read() -> None:
    door = Door(room=False)

    sent, unread = await door.post(headers=[(b"x-api-key", KEY.encode()), (b"x-request-id", b"req-7")])

    assert door.reached == []
    assert unread == []  # read to its end: the connection can carry the next request
    start, body = sent
    assert start["status"] == 503
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"application/problem+json"
    assert headers[b"retry-after"] == b"1"
    assert headers[b"x-request-id"] == b"req-7"
    problem = msgspec.json.decode(body["body"])
    assert (problem["code"], problem["status"], problem["instance"]) == ("overloaded", 503, "/v1/runs")


@pytest.mark.parametrize(
    ("why", "request_args"),
    [
        ("room", {}),
        ("no key", {"headers": []}),
        ("a wrong key", {"headers": [(b"x-api-key", b"wrong")]}),
        ("a possible replay", {"headers": [(b"x-api-key", KEY.encode()), (b"idempotency-key", b"k1")]}),
        ("another route", {"path": "/v1/runs/abc/cancel"}),
        ("another method", {"method": "GET"}),
    ],
)
async def test_everything_else_goes_on_to_the_app(why: str, request_args: dict[str, Any]) -> None:
    door = Door(room=why == "room")

    sent, _ = await door.post(**request_args)

    assert sent == []
    assert len(door.reached) == 1, why


async def test_a_throttled_address_is_left_to_the_app_so_a_right_key_answers_like_a_wrong_one() -> None:
    door = Door(room=False)
    limiter = InMemoryRateLimiter(door.clock)
    await door.throttle.failed("10.0.0.9", limiter)
    with pytest.raises(AuthThrottled):
        await door.throttle.failed("10.0.0.9", limiter)  # one failure too many: the address is throttled

    sent, _ = await door.post(client="10.0.0.9")

    assert sent == []
    assert door.reached == ["/v1/runs"]  # where the guard answers 429, as it does for any key


async def test_refusals_are_logged_as_a_count_every_ten_seconds() -> None:
    door = Door(room=False)

    with capture_logs() as logs:
        for _ in range(5):
            await door.post()
        door.clock.advance(10)
        await door.post()

    assert [(e["event"], e["refused"]) for e in logs] == [
        ("runs_refused_overloaded", 1),
        ("runs_refused_overloaded", 5),
    ]
