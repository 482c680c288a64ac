"""The client CPU one PostgreSQL statement of a run costs, by the way it is sent.

One statement at a time (no concurrency), so each figure is the cost of a statement and not of
waiting; client CPU is this process's user and system time (the kernel's share of a loopback round trip
included), PostgreSQL CPU the time of the scratch database's backends (read from /proc: the server
must run on this machine), each divided by the statements sent. Each way is measured in rounds, alternating, and the
median round is reported, since these machines are noisy.

- `sqlalchemy core`: what the adapters did before: a Core statement on an autocommit AsyncConnection,
  a pool checkout each.
- `driver, engine pool`: what they do now (`adapters/postgres/driver.py`): the statement sent by
  asyncpg on the connection `engine.raw_connection()` hands out.
- `asyncpg, held connection`: the same, on one connection kept open: the floor (no pool at all).

For: a claim-sized UPDATE by primary key, the run's whole-row UPSERT (`SqlaRunRepository.save`) and
the narrow UPDATE a save that only records the call in progress could be, and one trace batch (an
LLM step with its messages and tool set, and a tool step) as the three INSERTs it was and as the one
statement it is now.

The server is DATABASE_URL's (default: the local one on 127.0.0.1); the rows go into a scratch
database that is dropped at the end.

Run: `.venv/bin/python bench/statement_costs.py [--quick]`.
"""

import argparse
import asyncio
import os
import resource
import secrets
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.driver import driver_connection
from agentkit.adapters.postgres.mapping import message_rows, run_to_row, step_to_row, tool_set_rows
from agentkit.adapters.postgres.run_sql import SAVE_RUN, run_arguments
from agentkit.adapters.postgres.tables import run_messages, run_tool_sets, runs, steps
from agentkit.adapters.postgres.trace_sql import WRITE_BATCH, batch_arguments, step_values
from agentkit.domain import run as run_states
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import Message, Usage
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, PromptDelta, PromptRef, Step, StoredMessage, ToolSet, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema

NOW = datetime(2026, 6, 1, tzinfo=UTC)
NARROW = (
    "UPDATE runs SET calling = $2, heartbeat_at = $3, expires_at = $4, total_input_tokens = $5,"
    " total_output_tokens = $6, cost_usd = $7 WHERE id = $1 AND attempt = $8 AND status = 'running' RETURNING id"
)
# SqlaRunRepository.save before: the Core UPSERT (its fencing WHERE left out: it costs the client nothing)
_INSERT_RUN = insert(runs)
CORE_UPSERT = _INSERT_RUN.on_conflict_do_update(
    index_elements=[runs.c.id], set_={c.name: _INSERT_RUN.excluded[c.name] for c in runs.c if c.name != "id"}
).returning(runs.c.id)
CORE_UPDATE = update(runs).where(runs.c.id == bindparam("run_id")).values(calling=bindparam("calling"))
Op = Callable[[], Awaitable[Any]]


def cpu_s() -> float:
    """This process's CPU time so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def backends_cpu_s(pids: list[int]) -> float:
    """The CPU time so far of these PostgreSQL backends (0 when they are not on this machine, or not ours to read)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def batch_of(run_id: RunId) -> list[Step]:
    """A trace batch as the writer gets it mid-run: an LLM step that sent messages and a tool set, a tool step."""
    sent = (Message(role="system", content="be brief"), Message(role="user", content="Call the no-op tool twice."))
    llm = LLMStep(
        run_id=run_id,
        step_no=1,
        created_at=NOW,
        latency_ms=1.0,
        usage=Usage(input_tokens=10, output_tokens=5),
        text="step 1",
        prompt=PromptRef(message_count=2, tools_digest="t1"),
        sent=PromptDelta(
            messages=tuple(StoredMessage(seq=n, message=m) for n, m in enumerate(sent, start=1)),
            tool_set=ToolSet(digest="t1", schemas=(ToolSchema(name="noop", description="Nothing.", parameters={}),)),
        ),
    )
    tool = ToolStep(
        run_id=run_id,
        step_no=2,
        created_at=NOW,
        latency_ms=0.1,
        call_id=ToolCallId("c1"),
        tool_name="noop",
        arguments={"i": 1},
        result=ToolResult(ok=True, output="ok"),
    )
    return [llm, tool]


def ops(engine: AsyncEngine, held: Any, run: Run) -> dict[str, Op]:
    """Each way of sending each statement, as a coroutine function of no arguments."""
    single = engine.execution_options(isolation_level="AUTOCOMMIT")
    run_id = uuid.UUID(run.id)
    row = run_to_row(run)
    narrow = (run.id, "c1", NOW, NOW + timedelta(seconds=30), 10, 5, None, run.attempt)

    async def core(statement: Any, params: Any) -> None:
        async with single.connect() as conn:
            await conn.execute(statement, params)

    async def driver(sql: str, *args: Any) -> None:
        async with driver_connection(engine) as conn:
            await conn.fetchrow(sql, *args)

    def trace_core() -> Op:
        async def write() -> None:
            batch = batch_of(run.id)
            async with single.connect() as conn:
                await conn.execute(insert(run_messages).on_conflict_do_nothing(), [*message_rows(batch[0])])
                await conn.execute(insert(run_tool_sets).on_conflict_do_nothing(), [*tool_set_rows(batch[0])])
                rows = [{**step_to_row(step), "id": str(uuid.uuid4())} for step in batch]
                await conn.execute(insert(steps).on_conflict_do_nothing(), rows)

        return write

    def trace_driver() -> Op:
        async def write() -> None:
            batch = [(step, step_values(step, str(uuid.uuid4()))) for step in batch_of(run.id)]
            async with driver_connection(engine) as conn:
                await conn.execute(WRITE_BATCH, *batch_arguments(batch))

        return write

    return {
        "UPDATE by key: sqlalchemy core": lambda: core(CORE_UPDATE, {"run_id": run.id, "calling": "c1"}),
        "UPDATE by key: driver, engine pool": lambda: driver(
            "UPDATE runs SET calling = $2 WHERE id = $1", run_id, "c1"
        ),
        "UPDATE by key: asyncpg, held connection": lambda: held.fetchrow(
            "UPDATE runs SET calling = $2 WHERE id = $1", run_id, "c1"
        ),
        "save, whole-row UPSERT: sqlalchemy core": lambda: core(CORE_UPSERT, row),
        "save, whole-row UPSERT: driver, engine pool": lambda: driver(SAVE_RUN, *run_arguments(run)),
        "save, narrow UPDATE of the call: driver, engine pool": lambda: driver(NARROW, *narrow),
        "trace batch, 3 INSERTs: sqlalchemy core": trace_core(),
        "trace batch, 1 statement: driver, engine pool": trace_driver(),
    }


async def measure(engine: AsyncEngine, args: argparse.Namespace) -> None:
    """Warm each way up, then time them in alternating rounds; print the median round of each."""
    run = run_states.start(
        Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("bench"), goal="g", created_at=NOW),
        now=NOW,
        lease_until=NOW + timedelta(seconds=30),
    )
    await SqlaRunRepository(engine).add(run)
    async with driver_connection(engine) as held:  # held for the floor's figures, returned at the end
        table = ops(engine, held, run)
        for op in table.values():
            for _ in range(200):
                await op()
        backends = await held.fetch("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        pids = [row["pid"] for row in backends]
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in table}
        for _ in range(args.rounds):
            for name, op in table.items():
                client, server = cpu_s(), backends_cpu_s(pids)
                for _ in range(args.count):
                    await op()
                client, server = cpu_s() - client, backends_cpu_s(pids) - server
                rounds[name].append((client / args.count * 1e6, server / args.count * 1e6))
    print(f"{args.rounds} rounds of {args.count} statements each, the median round (by client CPU) of each")
    print("| statement | client CPU µs | PostgreSQL CPU µs | client µs by round |\n| --- | ---: | ---: | --- |")
    for name, each in rounds.items():
        client, server = sorted(each)[len(each) // 2]
        print(f"| {name} | {client:.0f} | {server:.0f} | {', '.join(f'{c:.0f}' for c, _ in each)} |")


async def main(args: argparse.Namespace) -> None:
    """A scratch database, migrated; the figures; the database dropped."""
    server = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"agentkit_bench_{secrets.token_hex(4)}"
    url = await create_database(server, name)
    try:
        engine = create_engine(url)
        try:
            await AlembicSchemaMigrator(engine).upgrade()
            await measure(engine, args)
        finally:
            await engine.dispose()
    finally:
        await drop_database(server, name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer statements, for a smoke test")
    parsed = parser.parse_args()
    parsed.count, parsed.rounds = (300, 3) if parsed.quick else (2000, 5)
    asyncio.run(main(parsed))
