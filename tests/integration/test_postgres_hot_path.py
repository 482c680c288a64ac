"""The statements a run makes, sent through asyncpg directly: what SQLAlchemy used to do for them still holds.

Odd values are stored as before (NUL as U+FFFD), a trace batch is one atomic statement that a bad
row does not cost the other runs, a batch written twice adds nothing, and the pool's connections
are looked after (a connection the server closed is replaced, one lost under a statement is an outage).
"""

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import is_outage
from agentkit.adapters.postgres import SqlaRunRepository, SqlaTraceSink, create_engine
from agentkit.adapters.postgres.driver import ConnectionLost, driver_connection
from agentkit.adapters.postgres.tables import run_messages, run_tool_sets, steps
from agentkit.adapters.postgres.trace_sql import WRITE_BATCH, batch_arguments, step_values
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import Message, Usage
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, PromptDelta, PromptRef, StoredMessage, ToolSet, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema
from tests.state_fixtures import StateServers

pytestmark = pytest.mark.integration
T0 = datetime(2026, 3, 1, tzinfo=UTC)
NUL, REPLACED = "\x00", "\ufffd"
TOOLS = ToolSchema(name="noop", description="Nothing.", parameters={"type": "object", "properties": {}})


def new_run() -> Run:
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("key-1"), goal="g", created_at=T0)
    return runs.start(run, now=T0, lease_until=T0 + timedelta(seconds=30))


def first_llm_step(run_id: RunId, content: str = "hello") -> LLMStep:
    """Step 1 of a run: it sent the run's first two messages and its tool set."""
    sent = (Message(role="system", content="be brief"), Message(role="user", content=content))
    return LLMStep(
        run_id=run_id,
        step_no=1,
        created_at=T0,
        latency_ms=5.0,
        usage=Usage(input_tokens=10, output_tokens=2),
        text="ok",
        prompt=PromptRef(message_count=2, tools_digest="tools-1"),
        sent=PromptDelta(
            messages=tuple(StoredMessage(seq=seq, message=message) for seq, message in enumerate(sent, start=1)),
            tool_set=ToolSet(digest="tools-1", schemas=(TOOLS,)),
        ),
    )


def tool_step(run_id: RunId, step_no: int, *, output: str = "x", path: str = "a") -> ToolStep:
    return ToolStep(
        run_id=run_id,
        step_no=step_no,
        created_at=T0,
        latency_ms=1.0,
        call_id=ToolCallId("c1"),
        tool_name="noop",
        arguments={"path": path},
        result=ToolResult(ok=True, output=output),
    )


@pytest.fixture
async def one_connection(state_servers: StateServers, pg_engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    """An engine whose pool holds a single connection (on the emptied tables of `pg_engine`)."""
    engine = create_engine(state_servers.database_url, pool_size=1, max_overflow=0)
    yield engine
    await engine.dispose()


async def terminate_backend(engine: AsyncEngine, pid: int) -> None:
    async with engine.connect() as conn:
        await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


async def test_nul_characters_in_text_and_json_are_stored_as_replacement_characters(pg_engine: AsyncEngine) -> None:
    repo, sink = SqlaRunRepository(pg_engine), SqlaTraceSink(pg_engine)
    run = new_run()
    await repo.add(run)
    ended = runs.succeed(run, now=T0, answer=f"an{NUL}swer", output={"k": f"v{NUL}"})

    await repo.save(ended)
    await sink.record_batch(
        [first_llm_step(run.id, content=f"hi{NUL}"), tool_step(run.id, 2, output=f"bin{NUL}ary", path=f"a{NUL}b")]
    )
    await sink.flush()

    stored = await repo.get(run.id)
    assert stored is not None
    assert (stored.answer, stored.output) == (f"an{REPLACED}swer", {"k": f"v{REPLACED}"})
    [_, tool] = await sink.steps(run.id)
    assert isinstance(tool, ToolStep)
    assert (tool.result.output, tool.arguments) == (f"bin{REPLACED}ary", {"path": f"a{REPLACED}b"})
    messages = (await sink.prompts(run.id)).messages
    assert [stored.message.content for stored in messages] == ["be brief", f"hi{REPLACED}"]
    assert sink.failed_writes == 0
    await sink.aclose()


async def test_a_bad_step_in_a_batch_costs_no_other_run_its_steps_messages_or_tools(pg_engine: AsyncEngine) -> None:
    repo, sink = SqlaRunRepository(pg_engine), SqlaTraceSink(pg_engine)
    good = new_run()
    await repo.add(good)
    orphan = RunId(str(uuid.uuid4()))  # no such run: its rows break the foreign keys

    # one batch, so one statement that fails for the orphan's rows and is split around them
    await sink.record_batch([first_llm_step(good.id), first_llm_step(orphan), tool_step(good.id, 2)])
    await sink.flush()

    assert [step.step_no for step in await sink.steps(good.id)] == [1, 2]
    prompts = await sink.prompts(good.id)
    assert [stored.seq for stored in prompts.messages] == [1, 2]
    assert prompts.tool_sets == {"tools-1": (TOOLS,)}
    assert sink.failed_writes == 1
    async with pg_engine.connect() as conn:
        for table in (steps, run_messages, run_tool_sets):
            orphans = select(func.count()).select_from(table).where(table.c.run_id == orphan)
            assert (await conn.execute(orphans)).scalar_one() == 0
    await sink.aclose()


async def test_a_batch_written_again_adds_each_row_once(pg_engine: AsyncEngine) -> None:
    run = new_run()
    await SqlaRunRepository(pg_engine).add(run)
    # as the writer queues them: each step's row id given once
    batch = [(step, step_values(step, str(uuid.uuid4()))) for step in (first_llm_step(run.id), tool_step(run.id, 2))]

    for _ in range(2):  # the first try landed, only its answer was lost: the writer sends it again
        async with driver_connection(pg_engine) as conn:
            await conn.execute(WRITE_BATCH, *batch_arguments(batch))

    async with pg_engine.connect() as conn:
        counts = [
            (await conn.execute(select(func.count()).select_from(table))).scalar_one()
            for table in (steps, run_messages, run_tool_sets)
        ]
    assert counts == [2, 2, 1]


async def backend_of(engine: AsyncEngine) -> tuple[int, Any]:
    """The pid of the server process behind the pool's connection, and the driver connection."""
    async with driver_connection(engine) as conn:
        return await conn.fetchval("SELECT pg_backend_pid()"), conn


async def test_a_pooled_connection_the_server_closed_is_replaced_without_failing_a_call(
    pg_engine: AsyncEngine, one_connection: AsyncEngine
) -> None:
    repo = SqlaRunRepository(one_connection)
    run = new_run()
    await repo.add(run)
    pid, pooled = await backend_of(one_connection)

    await terminate_backend(pg_engine, pid)  # an administrator, or a server restart, ends it while it is idle
    async with asyncio.timeout(30):
        while not pooled.is_closed():  # noqa: ASYNC110 - the client reads the server's goodbye within a loop turn or two
            await asyncio.sleep(0.01)

    assert await repo.get(run.id) == run
    assert (await backend_of(one_connection))[0] != pid


async def test_a_connection_lost_under_a_statement_is_an_outage_and_the_pool_serves_on(
    pg_engine: AsyncEngine, one_connection: AsyncEngine
) -> None:
    pid, _ = await backend_of(one_connection)

    async def sleep_on_it() -> None:
        async with driver_connection(one_connection) as conn:
            await conn.execute("SELECT pg_sleep(60)")

    sleeper = asyncio.create_task(sleep_on_it())
    async with asyncio.timeout(30):
        async with pg_engine.connect() as conn:
            busy = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid AND query LIKE '%pg_sleep%'")
            while not (await conn.execute(busy, {"pid": pid})).scalar_one():  # noqa: ASYNC110 - the server's view
                await asyncio.sleep(0.01)
        await terminate_backend(pg_engine, pid)
        with pytest.raises(Exception) as lost:  # noqa: PT011 - which one is asyncpg's to say; what matters is below
            await sleeper

    assert is_outage(lost.value)
    assert await SqlaRunRepository(one_connection).get(RunId(str(uuid.uuid4()))) is None


async def test_any_error_on_a_connection_that_closed_under_it_is_an_outage(one_connection: AsyncEngine) -> None:
    async def fail_on_a_dead_socket() -> None:
        async with driver_connection(one_connection) as conn:
            await conn.close()  # the socket died...
            raise asyncpg.InternalClientError("cannot switch to state 15")  # ...and asyncpg said so its own way

    with pytest.raises(ConnectionLost) as lost:
        await fail_on_a_dead_socket()

    assert is_outage(lost.value)
    assert await SqlaRunRepository(one_connection).get(RunId(str(uuid.uuid4()))) is None
