"""The cost of recording a step through the Postgres TraceSink, next to a raw asyncpg INSERT of the same row.

Latency: one step at a time, SqlaTraceSink.record and then flush, so the step is in the database
(Struct to row mapping, the writer task, SQLAlchemy Core, msgspec JSON, pool checkout, one
autocommitted INSERT), against asyncpg `pool.execute` of the same INSERT with the same values and
the JSON encoded by msgspec. Rounds alternate between the two and the median round is reported,
since these machines are noisy.

Throughput: 50 runs recording their steps concurrently (each run one step after another, as the
loop does; the clock stops when every step is written), through the sink with the service's
default pool (10 + 10 overflow) and through raw asyncpg with a pool of the same size.

The server is DATABASE_URL's when set, else an embedded PostgreSQL in a temporary folder; the rows
go into a scratch database that is dropped at the end.

Run: `.venv/bin/python bench/trace_write.py [--quick]`.
"""

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.embedded import EmbeddedPostgres
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    SqlaTraceSink,
    asyncpg_dsn,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.mapping import step_to_row
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.run import Run
from agentkit.domain.steps import ToolStep
from agentkit.domain.tools import ToolResult

RAW_INSERT = """
INSERT INTO steps (run_id, step_no, kind, tool_name, call_id, args, result, error,
                   latency_ms, input_tokens, output_tokens, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
"""
CONCURRENT_RUNS = 50
_json = msgspec.json.Encoder()


def make_step(run_id: RunId, step_no: int) -> ToolStep:
    """A typical tool step: a SQL tool's arguments and a few rows of result."""
    rows = "\n".join(f"order {i} | customer {i % 7} | {i * 12.5:.2f} EUR" for i in range(5))
    return ToolStep(
        run_id=run_id,
        step_no=step_no,
        created_at=datetime.now(UTC),
        latency_ms=4.2,
        call_id=ToolCallId(f"call-{step_no}"),
        tool_name="sql_readonly",
        arguments={"query": "SELECT id, customer, total FROM orders ORDER BY total DESC LIMIT 5"},
        result=ToolResult(ok=True, output=rows, latency_ms=4.2),
    )


def raw_args(step: ToolStep) -> tuple[Any, ...]:
    """The same values the sink writes, in INSERT order, JSON encoded the same way."""
    row = step_to_row(step)
    return (
        uuid.UUID(row["run_id"]),
        row["step_no"],
        row["kind"],
        row["tool_name"],
        row["call_id"],
        _json.encode(row["args"]).decode(),
        _json.encode(row["result"]).decode(),
        row["error"],
        row["latency_ms"],
        row["input_tokens"],
        row["output_tokens"],
        row["created_at"],
    )


async def per_step_us(record: Callable[[ToolStep], Awaitable[None]], run_id: RunId, start: int, n: int) -> float:
    """Microseconds per step over `n` sequential writes."""
    began = time.perf_counter()
    for i in range(n):
        await record(make_step(run_id, start + i))
    return (time.perf_counter() - began) / n * 1e6


async def steps_per_second(
    record: Callable[[ToolStep], Awaitable[None]],
    run_ids: list[RunId],
    each: int,
    settle: Callable[[], Awaitable[None]] | None = None,
) -> float:
    """Steps per second with every run recording `each` steps at once, until all are written."""

    async def one_run(run_id: RunId) -> None:
        for step_no in range(1, each + 1):
            await record(make_step(run_id, step_no))

    began = time.perf_counter()
    await asyncio.gather(*(one_run(run_id) for run_id in run_ids))
    if settle is not None:
        await settle()
    return len(run_ids) * each / (time.perf_counter() - began)


async def bench(url: URL, *, rounds: int, per_round: int, each: int) -> dict[str, float]:
    """Measure both paths on the database at `url`."""
    engine = create_engine(url)  # the service's defaults: pool 10 + 10 overflow
    pool = await asyncpg.create_pool(asyncpg_dsn(url), min_size=1, max_size=20)
    try:
        sink = SqlaTraceSink(engine)
        runs = SqlaRunRepository(engine)
        run_ids = [RunId(str(uuid.uuid4())) for _ in range(CONCURRENT_RUNS + 2)]
        for run_id in run_ids:
            await runs.add(Run(id=run_id, owner=OwnerId("bench"), goal="bench", created_at=datetime.now(UTC)))

        async def raw(step: ToolStep) -> None:
            await pool.execute(RAW_INSERT, *raw_args(step))

        async def written(step: ToolStep) -> None:
            await sink.record(step)
            await sink.flush()

        sink_run, raw_run = run_ids[-2:]
        await per_step_us(written, sink_run, 0, 200)  # warm up: connections, prepared statements
        await per_step_us(raw, raw_run, 0, 200)
        sink_us, raw_us = [], []
        for r in range(rounds):
            start = 1000 + r * per_round
            raw_us.append(await per_step_us(raw, raw_run, start, per_round))
            sink_us.append(await per_step_us(written, sink_run, start, per_round))

        concurrent = run_ids[:CONCURRENT_RUNS]
        raw_rate = await steps_per_second(raw, concurrent, each)
        sink_rate = await steps_per_second(sink.record, concurrent, each, settle=sink.flush)
        await sink.aclose()
        assert sink.failed_writes == 0, "the sink dropped steps; see the log"
        return {
            "sink_us": statistics.median(sink_us),
            "raw_us": statistics.median(raw_us),
            "sink_rate": sink_rate,
            "raw_rate": raw_rate,
        }
    finally:
        await pool.close()
        await engine.dispose()


async def main_async(server: URL, *, quick: bool) -> dict[str, float]:
    """Make a scratch database, measure, drop it."""
    name = f"agentkit_bench_{uuid.uuid4().hex[:8]}"
    url = await create_database(server, name)
    try:
        migrate_with = create_engine(url, pool_size=1, max_overflow=0)
        await AlembicSchemaMigrator(migrate_with).upgrade()
        await migrate_with.dispose()
        if quick:
            return await bench(url, rounds=3, per_round=200, each=10)
        return await bench(url, rounds=7, per_round=1000, each=40)
    finally:
        await drop_database(server, name)


def main() -> None:
    """Parse the arguments, find a server, run, and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke test")
    args = parser.parse_args()

    embedded: EmbeddedPostgres | None = None
    folder = Path(tempfile.mkdtemp(prefix="agentkit-bench-"))
    try:
        if os.environ.get("DATABASE_URL"):
            server, where = parse_database_url(os.environ["DATABASE_URL"]), "DATABASE_URL"
        else:
            embedded = EmbeddedPostgres(folder / "postgres")
            server, where = embedded.start(), "embedded PostgreSQL"
        result = asyncio.run(main_async(server, quick=args.quick))
    finally:
        if embedded is not None:
            embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)

    print(f"server: {where}")
    print("| measure | SqlaTraceSink | raw asyncpg | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| one step, sequential (µs/step, median) | {result['sink_us']:.0f} | {result['raw_us']:.0f} "
        f"| {result['sink_us'] / result['raw_us']:.2f}x |"
    )
    print(
        f"| {CONCURRENT_RUNS} concurrent runs (steps/s) | {result['sink_rate']:,.0f} | {result['raw_rate']:,.0f} "
        f"| {result['raw_rate'] / result['sink_rate']:.2f}x |"
    )


if __name__ == "__main__":
    main()
