"""Postgres specifics beyond the contract: migrations, URL forms, cascades, odd values, a dead server."""

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import OutageWatch
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    SqlaTraceSink,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.schema import find_migrations
from agentkit.adapters.postgres.tables import metadata, steps
from agentkit.application.backoff import Backoff
from agentkit.application.errors import StoreUnavailable
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.run import Run
from agentkit.domain.steps import ToolStep
from agentkit.domain.tools import ToolResult
from tests.state_fixtures import StateServers, unique_name

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def finished_run(at: datetime) -> Run:
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("key-1"), goal="g", created_at=at)
    return runs.succeed(runs.start(run, now=at, lease_until=at), now=at, answer="done")


def tool_step(run_id: RunId, step_no: int, value: object = None) -> ToolStep:
    return ToolStep(
        run_id=run_id,
        step_no=step_no,
        created_at=T0,
        latency_ms=1.0,
        call_id=ToolCallId("c1"),
        tool_name="t",
        arguments={},
        result=ToolResult(ok=True, output="x", value=value),
    )


async def test_the_migrations_build_exactly_the_tables_the_adapters_use(pg_engine: AsyncEngine) -> None:
    async with pg_engine.connect() as conn:
        diff = await conn.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync, opts={"compare_type": True}), metadata)
        )

    assert diff == []
    assert await AlembicSchemaMigrator(pg_engine).current() == "0012"


async def test_migrating_a_fresh_database_from_two_processes_at_once_applies_each_migration_once(
    state_servers: StateServers,
) -> None:
    name = unique_name("migrate")
    url = await create_database(state_servers.server_url, name)
    engines = [create_engine(url) for _ in range(2)]
    try:
        assert await AlembicSchemaMigrator(engines[0]).current() is None
        await asyncio.gather(*(AlembicSchemaMigrator(e).upgrade() for e in engines))
        await AlembicSchemaMigrator(engines[0]).upgrade()

        assert await AlembicSchemaMigrator(engines[1]).current() == "0012"
    finally:
        for engine in engines:
            await engine.dispose()
        await drop_database(state_servers.server_url, name)


def _alembic(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(find_migrations()))
    config.attributes["connection"] = connection
    return config


async def test_a_call_recorded_before_the_upgrade_to_batches_is_still_known_after_it_and_back(
    state_servers: StateServers,
) -> None:
    # a run interrupted while a non-idempotent call ran, under the release that recorded one call id
    name = unique_name("calling")
    url = await create_database(state_servers.server_url, name)
    engine = create_engine(url)
    run_id = str(uuid.uuid4())
    try:
        async with engine.begin() as conn:
            await conn.run_sync(lambda sync: command.upgrade(_alembic(sync), "0008"))
            await conn.execute(
                text(
                    "INSERT INTO runs (id, owner, goal, status, max_steps, created_at, calling) "
                    "VALUES (:id, 'key-1', 'g', 'running', 10, now(), 'call_1')"
                ),
                {"id": run_id},
            )
            await conn.run_sync(lambda sync: command.upgrade(_alembic(sync), "head"))
        stored = await SqlaRunRepository(engine).get(RunId(run_id))
        assert stored is not None
        assert stored.calling == ("call_1",)

        async with engine.begin() as conn:
            await conn.run_sync(lambda sync: command.downgrade(_alembic(sync), "0008"))
            assert (await conn.execute(text("SELECT calling FROM runs"))).scalar_one() == "call_1"
    finally:
        await engine.dispose()
        await drop_database(state_servers.server_url, name)


@pytest.mark.parametrize("scheme", ["postgresql", "postgresql+asyncpg"])
async def test_database_url_works_in_the_usual_and_the_asyncpg_form(state_servers: StateServers, scheme: str) -> None:
    raw = state_servers.database_url.set(drivername=scheme).render_as_string(hide_password=False)
    engine = create_engine(parse_database_url(raw))
    try:
        run = finished_run(T0)
        await SqlaRunRepository(engine).add(run)
        assert await SqlaRunRepository(engine).get(run.id) == run
    finally:
        await engine.dispose()


async def test_deleting_old_runs_deletes_their_steps(pg_engine: AsyncEngine) -> None:
    repo, trace = SqlaRunRepository(pg_engine), SqlaTraceSink(pg_engine)
    old, new = finished_run(T0), finished_run(T0 + timedelta(days=3))
    for run in (old, new):
        await repo.add(run)
        for step_no in (1, 2):
            await trace.record(tool_step(run.id, step_no))
    await trace.flush()

    assert await repo.delete_finished_before(T0 + timedelta(days=1)) == 1

    async with pg_engine.connect() as conn:
        remaining = (await conn.execute(select(func.count()).select_from(steps))).scalar_one()
    assert remaining == 2
    assert await trace.steps(old.id) == []


async def test_a_tool_value_json_cannot_hold_is_kept_as_its_text(pg_engine: AsyncEngine) -> None:
    run = finished_run(T0)
    await SqlaRunRepository(pg_engine).add(run)
    trace = SqlaTraceSink(pg_engine)

    await trace.record(tool_step(run.id, 1, value=object))

    [step] = await trace.steps(run.id)
    assert isinstance(step, ToolStep)
    assert step.result.value == str(object)
    assert trace.failed_writes == 0


async def test_a_write_to_a_server_that_is_down_is_retried_and_never_blocks_recording(unused_tcp_port: int) -> None:
    engine = create_engine(parse_database_url(f"postgresql://postgres@127.0.0.1:{unused_tcp_port}/none"))
    sink = SqlaTraceSink(engine, write_timeout_s=0.5, backoff=Backoff(first_s=0.01, cap_s=0.05))
    started = time.perf_counter()

    await sink.record(tool_step(RunId(str(uuid.uuid4())), 1))
    recorded_in = time.perf_counter() - started
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await sink.flush()  # not stored: flush does not pretend it is

    assert recorded_in < 0.05  # recording never waits for the database
    assert sink.failed_writes == 0
    assert sink.retried_writes >= 2
    assert sink.backlog() == 1
    await sink.aclose(timeout_s=0.1)  # stopping with the server still down: bounded, the step logged as lost
    await engine.dispose()


async def test_a_write_for_a_run_that_does_not_exist_is_swallowed(pg_engine: AsyncEngine) -> None:
    sink = SqlaTraceSink(pg_engine)

    await sink.record(tool_step(RunId(str(uuid.uuid4())), 1))
    await sink.flush()

    assert sink.failed_writes == 1


async def test_a_bad_step_in_a_batch_costs_no_other_run_its_steps(pg_engine: AsyncEngine) -> None:
    repo, sink = SqlaRunRepository(pg_engine), SqlaTraceSink(pg_engine)
    run = finished_run(T0)
    await repo.add(run)
    orphan = RunId(str(uuid.uuid4()))  # no such run: its step breaks the foreign key

    # recorded together, so the writer task sends them in one batch
    for step in (tool_step(run.id, 1), tool_step(orphan, 1), tool_step(run.id, 2)):
        await sink.record(step)
    await sink.flush()

    assert [step.step_no for step in await sink.steps(run.id)] == [1, 2]
    assert sink.failed_writes == 1
    await sink.aclose()


def running_run(lease_until: datetime) -> Run:
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("key-1"), goal="g", created_at=T0)
    return runs.start(run, now=T0, lease_until=lease_until)


async def test_right_after_an_outage_only_leases_that_lapsed_before_it_are_expired(pg_engine: AsyncEngine) -> None:
    now = [T0 + timedelta(minutes=10)]
    watch = OutageWatch(grace_s=5, clock=lambda: now[0])
    repo = SqlaRunRepository(pg_engine, watch=watch)
    dead_before = running_run(lease_until=T0 + timedelta(minutes=5))  # its executor died long before
    caught = running_run(lease_until=T0 + timedelta(minutes=10, seconds=20))  # lapsed during the outage
    for run in (dead_before, caught):
        await repo.add(run)

    watch.failed()  # PostgreSQL goes away at minute 10...
    now[0] += timedelta(seconds=30)
    watch.answered()  # ...and is back 30 s later
    just_after = await repo.expire_lapsed(now[0] + timedelta(seconds=1), reason="worker_lost")
    later = await repo.expire_lapsed(now[0] + timedelta(seconds=6), reason="worker_lost")

    # a live executor renews within a second or two of the database coming back: it gets the grace
    assert [run.id for run in just_after] == [dead_before.id]
    assert [run.id for run in later] == [caught.id]


async def test_the_repository_notes_an_outage_it_sees(unused_tcp_port: int) -> None:
    engine = create_engine(
        parse_database_url(f"postgresql://postgres@127.0.0.1:{unused_tcp_port}/none"), connect_timeout_s=1
    )
    repo = SqlaRunRepository(engine)

    with pytest.raises(StoreUnavailable):
        await repo.get(RunId(str(uuid.uuid4())))

    assert repo.watch.down_since is not None
    assert repo.watch.back_at is None
    await engine.dispose()


async def test_a_batch_that_times_out_is_retried_until_stored_once(pg_engine: AsyncEngine) -> None:
    run = finished_run(T0)
    await SqlaRunRepository(pg_engine).add(run)
    sink = SqlaTraceSink(pg_engine, write_timeout_s=0.2, backoff=Backoff(first_s=0.05, cap_s=0.1))

    async with pg_engine.connect() as blocker:
        # a database too busy to take the batch in time: each try waits on the lock and times out
        await blocker.execute(text("LOCK TABLE steps IN ACCESS EXCLUSIVE MODE"))
        for step_no in (1, 2, 3):
            await sink.record(tool_step(run.id, step_no))
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0):
                await sink.flush()  # not stored yet, and flush does not pretend otherwise
        await blocker.rollback()
    await asyncio.wait_for(sink.flush(), 30)

    assert sink.retried_writes >= 2
    assert sink.failed_writes == 0
    assert [step.step_no for step in await sink.steps(run.id)] == [1, 2, 3]  # each once, none dropped
    await sink.aclose()
