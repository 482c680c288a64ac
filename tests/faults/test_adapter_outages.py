"""Every adapter method that touches a store says StoreUnavailable when its server is stopped, frozen or restarted.

Not some other error (that would be a 500), and not after a long wait: each call is bounded by the
adapters' timeouts. The methods are called all at once, so a stuck one shows as the slowest.
"""

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.memory import FixedClock
from agentkit.adapters.postgres import AlembicSchemaMigrator, SqlaRunRepository, SqlaTraceSink, create_engine
from agentkit.adapters.postgres import parse_database_url as parse_url
from agentkit.adapters.redis import RedisRateLimiter, RedisSessionStore, create_redis
from agentkit.application.errors import StoreUnavailable
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.messages import Message
from agentkit.domain.run import Run
from tests.faults.conftest import FaultStack

pytestmark = pytest.mark.faults

BOUND_S = 0.5  # each of connect, pool wait, statement, Redis connect and reply
# a pool wait and two statement bounds (see tests/faults/app.py), and slack for a loaded machine
CALL_BOUND_S = 3 * BOUND_S + 2.0
NOW = datetime(2026, 6, 1, tzinfo=UTC)
OWNER, SESSION = OwnerId("owner"), SessionId("session")
Call = Callable[[], Awaitable[object]]


@dataclass
class Adapters:
    """The real adapters on the stack's servers, with short bounds."""

    engine: AsyncEngine
    redis: Redis
    runs: SqlaRunRepository
    trace: SqlaTraceSink
    sessions: RedisSessionStore
    limiter: RedisRateLimiter
    migrator: AlembicSchemaMigrator
    run: Run

    def postgres_calls(self) -> dict[str, Call]:
        """One call of every Postgres adapter method a request or the sweeper makes."""
        runs, run = self.runs, self.run
        return {
            "runs.add": lambda: runs.add(Run(id=RunId(str(uuid.uuid4())), owner=OWNER, goal="g", created_at=NOW)),
            "runs.get": lambda: runs.get(run.id),
            "runs.get_by_idempotency_key": lambda: runs.get_by_idempotency_key(OWNER, "key"),
            "runs.save": lambda: runs.save(run),
            "runs.request_cancel": lambda: runs.request_cancel(run.id),
            "runs.lapsed": lambda: runs.lapsed(NOW),
            "runs.renew_leases": lambda: runs.renew_leases([run.id], now=NOW, until=NOW + timedelta(seconds=30)),
            "runs.expire_lapsed": lambda: runs.expire_lapsed(NOW, reason="worker_lost"),
            "runs.delete_finished_before": lambda: runs.delete_finished_before(NOW - timedelta(days=30)),
            "trace.steps": lambda: self.trace.steps(run.id),
            "migrator.current": self.migrator.current,
        }

    def redis_calls(self) -> dict[str, Call]:
        """One call of every Redis adapter method."""
        sessions = self.sessions
        return {
            "sessions.load": lambda: sessions.load(OWNER, SESSION),
            "sessions.save": lambda: sessions.save(OWNER, SESSION, [Message(role="user", content="hi")]),
            "sessions.delete_saved_before": lambda: sessions.delete_saved_before(NOW),
            "limiter.hit": lambda: self.limiter.hit("key", limit=100, window_s=60),
        }


@pytest.fixture
async def adapters(stack: FaultStack) -> AsyncIterator[Adapters]:
    """The adapters, each pool warmed up (a restart must find dead pooled connections)."""
    engine = create_engine(
        parse_url(stack.dsn), connect_timeout_s=BOUND_S, pool_timeout_s=BOUND_S, statement_timeout_s=BOUND_S
    )
    redis = create_redis(stack.redis.url, socket_timeout_s=BOUND_S, connect_timeout_s=BOUND_S, pool_timeout_s=BOUND_S)
    runs = SqlaRunRepository(engine)
    run = Run(id=RunId("6f1d1c9e-0000-4000-8000-000000000000"), owner=OWNER, goal="g", created_at=NOW)
    await runs.add(run)
    kit = Adapters(
        engine=engine,
        redis=redis,
        runs=runs,
        trace=SqlaTraceSink(engine),
        sessions=RedisSessionStore(redis, clock=FixedClock(NOW)),
        limiter=RedisRateLimiter(redis),
        migrator=AlembicSchemaMigrator(engine),
        run=run,
    )
    await asyncio.gather(*(call() for call in (*kit.postgres_calls().values(), *kit.redis_calls().values())))
    yield kit
    await kit.trace.aclose(timeout_s=1)
    await redis.aclose()
    await engine.dispose()


async def outcomes(calls: dict[str, Call]) -> dict[str, tuple[str, float]]:
    """Each call's outcome (`ok`, or the error's type) and how long it took, all called at once."""

    async def one(call: Call) -> tuple[str, float]:
        began = time.monotonic()
        try:
            await call()
        except Exception as exc:
            return type(exc).__name__, time.monotonic() - began
        return "ok", time.monotonic() - began

    async with asyncio.timeout(60):
        results = await asyncio.gather(*(one(call) for call in calls.values()))
    return dict(zip(calls, results, strict=True))


def assert_unavailable_within_bound(results: dict[str, tuple[str, float]]) -> None:
    """Every call said StoreUnavailable, each within the bound."""
    assert {name: kind for name, (kind, _) in results.items() if kind != StoreUnavailable.__name__} == {}
    assert {name: took for name, (_, took) in results.items() if took > CALL_BOUND_S} == {}


async def test_postgres_stopped(stack: FaultStack, adapters: Adapters) -> None:
    await asyncio.to_thread(stack.postgres.stop)

    calls = {**adapters.postgres_calls(), "migrator.upgrade": adapters.migrator.upgrade}
    assert_unavailable_within_bound(await outcomes(calls))


async def test_postgres_frozen(stack: FaultStack, adapters: Adapters) -> None:
    # (migrations run without a statement bound, on purpose: a long DDL must not be cut off)
    await asyncio.to_thread(stack.postgres.freeze)
    try:
        assert_unavailable_within_bound(await outcomes(adapters.postgres_calls()))
    finally:
        await asyncio.to_thread(stack.postgres.thaw)


async def test_postgres_restarted_costs_at_most_one_failure_per_call_then_serves(
    stack: FaultStack, adapters: Adapters
) -> None:
    await asyncio.to_thread(stack.postgres.stop)
    await asyncio.to_thread(stack.postgres.start)

    first = await outcomes(adapters.postgres_calls())
    second = await outcomes(adapters.postgres_calls())

    # the pooled connections died with the server: their first use may fail, as an outage, never a bug
    assert {name: kind for name, (kind, _) in first.items() if kind not in ("ok", StoreUnavailable.__name__)} == {}
    # no restart of the process needed: the pool reconnects
    assert {name: kind for name, (kind, _) in second.items() if kind != "ok"} == {}


async def test_redis_stopped(stack: FaultStack, adapters: Adapters) -> None:
    await asyncio.to_thread(stack.redis.stop)

    assert_unavailable_within_bound(await outcomes(adapters.redis_calls()))


async def test_redis_frozen(stack: FaultStack, adapters: Adapters) -> None:
    await asyncio.to_thread(stack.redis.freeze)
    try:
        assert_unavailable_within_bound(await outcomes(adapters.redis_calls()))
    finally:
        await asyncio.to_thread(stack.redis.thaw)


async def test_redis_restarted_serves_at_once(stack: FaultStack, adapters: Adapters) -> None:
    await asyncio.to_thread(stack.redis.stop)
    await asyncio.to_thread(stack.redis.start)

    # a dead pooled connection is retried once on a new one, so even the first calls succeed
    assert {name: kind for name, (kind, _) in (await outcomes(adapters.redis_calls())).items() if kind != "ok"} == {}
