"""Overload is refused at once (503), the rate limit counts only accepted runs, failed keys are throttled
per client address, and a Redis outage does not stop run creation: through HTTP, real PostgreSQL and Redis.
"""

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from litestar.types import ASGIApp, Receive, Scope, Send
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.application.tools import Tool, tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from tests.http_fixtures import KEY_A, ApiClient, ApiFactory, headers
from tests.redis_process import RedisProcess, redis_process

pytestmark = pytest.mark.integration


def gate_call() -> LLMResponse:
    return LLMResponse(tool_calls=(ToolCall(id=ToolCallId("c1"), name="wait_for_gate", arguments={}),), usage=Usage())


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=2))


class ThreadGate:
    """Holds `wait_for_gate` calls until the test opens it.

    Thread-safe, so it holds whichever event loop or thread the app's runs execute on.
    """

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def tool(self) -> Tool[..., Any]:
        @tool
        async def wait_for_gate() -> str:
            """Wait until the test opens the gate."""
            self.entered.set()
            await asyncio.to_thread(self.opened.wait, 60)
            return "through"

        return wait_for_gate

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 30), "no run reached the gate"


@pytest.fixture
def gate() -> Iterator[ThreadGate]:
    """A gate, opened at the end whatever the test did (so no tool thread outlives it)."""
    held = ThreadGate()
    yield held
    held.opened.set()


async def stored_runs(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(runs_table))).scalar_one())


def from_peer(app: ASGIApp) -> ASGIApp:
    """Take the TCP peer from a test header, as if each request came from that address (no traffic leaves)."""

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        peer = dict(scope.get("headers", [])).get(b"x-test-peer")
        if peer is not None:
            scope["client"] = (peer.decode(), 40000)
        await app(scope, receive, send)

    return handler


@pytest.fixture
async def api_with_peers(api_factory: ApiFactory) -> ApiClient:
    """An app whose requests name their client address in `X-Test-Peer`."""
    api: ApiClient = await api_factory([answer("ok")] * 5)
    api.app.asgi_handler = from_peer(api.app.asgi_handler)
    return api


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    """A Redis of this test's own, to stop mid-test."""
    with redis_process() as server:
        yield server


async def test_past_the_cap_a_run_is_refused_at_once_with_503_and_nothing_is_stored(
    api_factory: ApiFactory, pg_engine: AsyncEngine, gate: ThreadGate
) -> None:
    script = [gate_call(), answer("done"), answer("later")]
    api = await api_factory(script, tools=[gate.tool()], max_runs_in_flight=1)
    held = await api.post("/v1/runs", json={"goal": "hold"}, headers=headers(Prefer="respond-async"))
    await gate.wait_entered()

    refused = await api.post("/v1/runs", json={"goal": "one too many"}, headers=headers())

    assert held.status_code == 202
    assert refused.status_code == 503
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.headers["retry-after"] == "1"
    assert refused.json()["code"] == "overloaded"
    assert await stored_runs(pg_engine) == 1
    gate.opened.set()
    ended = await api.get(held.headers["location"], headers=headers(), params={"wait": 30})
    assert ended.json()["status"] == "succeeded"
    after = await api.post("/v1/runs", json={"goal": "room again"}, headers=headers())
    assert after.status_code == 201


async def test_idempotent_replays_do_not_spend_the_rate_limit(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("once"), answer("twice"), answer("three")], rate_limit_per_min=3)
    key = headers(**{"Idempotency-Key": "order-9"})
    first = await api.post("/v1/runs", json={"goal": "pay"}, headers=key)

    replays = [await api.post("/v1/runs", json={"goal": "pay"}, headers=key) for _ in range(9)]
    fresh = [await api.post("/v1/runs", json={"goal": "other"}, headers=headers()) for _ in range(3)]

    assert first.status_code == 201
    assert {r.status_code for r in replays} == {201}
    assert {r.json()["id"] for r in replays} == {first.json()["id"]}
    assert all(r.headers["idempotent-replayed"] == "true" for r in replays)
    assert [r.status_code for r in fresh] == [201, 201, 429]  # the first run and two more: the limit of 3


async def test_an_idempotent_replay_is_not_refused_by_the_cap(api_factory: ApiFactory, gate: ThreadGate) -> None:
    api = await api_factory([gate_call(), answer("done")], tools=[gate.tool()], max_runs_in_flight=1)
    key = headers(**{"Idempotency-Key": "order-9"}, Prefer="respond-async")
    first = await api.post("/v1/runs", json={"goal": "pay"}, headers=key)
    await gate.wait_entered()

    replay = await api.post("/v1/runs", json={"goal": "pay"}, headers=key)
    other = await api.post("/v1/runs", json={"goal": "another"}, headers=headers())

    assert first.status_code == 202
    assert (replay.status_code, replay.json()["id"]) == (202, first.json()["id"])
    assert other.status_code == 503
    gate.opened.set()
    await api.get(first.headers["location"], headers=headers(), params={"wait": 30})


async def test_requests_refused_by_validation_do_not_spend_the_rate_limit(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("ok")] * 3, rate_limit_per_min=2, max_goal_chars=10)

    invalid = [
        await api.post("/v1/runs", json=body, headers=headers())
        for body in [{"goal": "   "}, {"goal": "x" * 11}, {"goal": "x", "output_schema": {"type": "string"}}] * 3
    ]
    accepted = [await api.post("/v1/runs", json={"goal": "x"}, headers=headers()) for _ in range(2)]
    limited = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())

    assert {r.status_code for r in invalid} == {422}
    assert [r.status_code for r in accepted] == [201, 201]
    assert limited.status_code == 429


async def test_wrong_api_keys_from_one_address_are_throttled_without_locking_out_the_key(
    api_with_peers: ApiClient,
) -> None:
    api = api_with_peers
    attacker, neighbour, user = ({"X-Test-Peer": host} for host in ("127.0.0.2", "127.0.0.3", "127.0.0.4"))

    attempts = [await api.get("/v1/tools", headers={**attacker, "X-API-Key": f"guess-{i}"}) for i in range(300)]
    valid_from_attacker = await api.get("/v1/tools", headers={**attacker, **headers()})
    wrong_from_neighbour = await api.get("/v1/tools", headers={**neighbour, "X-API-Key": "typo"})
    valid_from_user = await api.post("/v1/runs", json={"goal": "x"}, headers={**user, **headers(KEY_A)})

    statuses = [r.status_code for r in attempts]
    assert statuses[:10] == [401] * 10  # a small burst, then refused before any key is compared
    assert set(statuses[10:]) == {429}
    throttled = attempts[-1]
    assert throttled.json()["code"] == "auth_throttled"
    assert 1 <= int(throttled.headers["retry-after"]) <= 60
    # while throttled, the address learns nothing, not even from a right key: the throttle is no oracle
    assert valid_from_attacker.status_code == 429
    assert wrong_from_neighbour.status_code == 401  # other addresses have budgets of their own
    assert valid_from_user.status_code == 201  # and the key itself was never locked out


async def test_runs_are_created_while_redis_is_down_and_the_outage_is_logged_once(
    api_factory: ApiFactory, own_redis: RedisProcess
) -> None:
    api: ApiClient = await api_factory([answer("ok")] * 6, redis_url=own_redis.url, rate_limit_per_min=3)
    before = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())
    own_redis.stop()

    with structlog.testing.capture_logs() as logs:
        during = [await api.post("/v1/runs", json={"goal": "x"}, headers=headers()) for _ in range(4)]

    assert before.status_code == 201
    # the per-process window takes over: runs go on, and its limit still holds
    assert [r.status_code for r in during] == [201, 201, 201, 429]
    warned = [e["event"] for e in logs if e["log_level"] == "warning"]
    assert "rate_limiter_fallback" in warned
    # each part that uses Redis says so once (the run events too), not once per request
    assert len(warned) == len(set(warned)), warned


async def test_at_the_door_and_in_the_use_case_a_refusal_is_the_same_answer(
    api_factory: ApiFactory, gate: ThreadGate
) -> None:
    api = await api_factory([gate_call(), answer("done")], tools=[gate.tool()], max_runs_in_flight=1)
    held = await api.post("/v1/runs", json={"goal": "hold"}, headers=headers(Prefer="respond-async"))
    await gate.wait_entered()

    with structlog.testing.capture_logs() as logs:
        at_door = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())
        # a new Idempotency-Key might have been a replay: it passes the door and the use-case refuses it
        in_use_case = await api.post("/v1/runs", json={"goal": "x"}, headers=headers(**{"Idempotency-Key": "new"}))

    assert [e["event"] for e in logs if e["event"] == "runs_refused_overloaded"] == ["runs_refused_overloaded"]
    for refused in (at_door, in_use_case):
        assert refused.status_code == 503
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["x-request-id"]
    assert at_door.json() == in_use_case.json()
    assert at_door.json()["code"] == "overloaded"
    gate.opened.set()
    await api.get(held.headers["location"], headers=headers(), params={"wait": 30})


async def test_at_the_cap_a_wrong_key_is_still_a_401_and_a_throttled_address_still_a_429(
    api_factory: ApiFactory, gate: ThreadGate
) -> None:
    api: ApiClient = await api_factory([gate_call(), answer("done")], tools=[gate.tool()], max_runs_in_flight=1)
    api.app.asgi_handler = from_peer(api.app.asgi_handler)
    held = await api.post("/v1/runs", json={"goal": "hold"}, headers=headers(Prefer="respond-async"))
    await gate.wait_entered()
    attacker = {"X-Test-Peer": "127.0.0.5"}

    wrong = [await api.post("/v1/runs", json={"goal": "x"}, headers={**attacker, "X-API-Key": "no"}) for _ in range(11)]
    right_key_while_throttled = await api.post("/v1/runs", json={"goal": "x"}, headers={**attacker, **headers()})
    missing = await api.post("/v1/runs", json={"goal": "x"}, headers={"X-Test-Peer": "127.0.0.6"})

    assert [r.status_code for r in wrong] == [401] * 10 + [429]  # counted as failures, not told of the load
    assert right_key_while_throttled.status_code == 429  # not 503: that would tell a right key from a wrong one
    assert missing.status_code == 401
    gate.opened.set()
    await api.get(held.headers["location"], headers=headers(), params={"wait": 30})
