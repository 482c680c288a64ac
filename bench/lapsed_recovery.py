"""How long the lease sweeper takes over 5,000 lapsed runs: half resumed, half expired (MAX_RUN_ATTEMPTS).

The runs are stored as a crash leaves them: running, their lease lapsed a minute ago; half were taken
once (they are resumed), half MAX_RUN_ATTEMPTS times already (they expire, worker_lost). One pass of
`RecoverLapsedRuns` is timed, in queue mode (each resumed run enqueued on a SAQ queue in Redis, as a
worker process's sweeper does) and in inline mode (each resumed run taken over by a task of this
process: the pass is timed until every run has ended, the scripted model answering at once). The
figure to compare is one lease period (RUN_LEASE_S, 30 s by default); before resume, the sweeper
expired at most 100 runs a pass, one pass every 15 s: 5,000 runs took 12.5 minutes.

PostgreSQL and Redis are DATABASE_URL's and REDIS_URL's (default: the local ones), in a scratch
database and key prefix removed at the end.

Run: `.venv/bin/python bench/lapsed_recovery.py [--runs N]` (about a minute).
"""

import argparse
import asyncio
import os
import secrets
import time
import uuid
from datetime import UTC, datetime, timedelta

from saq.queue.redis import RedisQueue
from sqlalchemy import delete, func, select

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import InMemoryRunEvents, InMemorySessionStore
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    SqlaTraceSink,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.mapping import run_to_row
from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.adapters.queue import QueueRunScheduler, RunJobs
from agentkit.adapters.redis import create_redis
from agentkit.adapters.scheduling import InlineRunScheduler, Recovery
from agentkit.adapters.system import SystemClock
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.recover_runs import RecoverLapsedRuns, RecoveryPass
from agentkit.application.tools import ToolRegistry
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.messages import LLMResponse
from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.settings import LoggingSettings

MAX_ATTEMPTS = 3
LEASE_S = 30.0


def crashed_runs(count: int, now: datetime) -> list[Run]:
    """Runs left running by dead executors, their leases lapsed a minute ago; every other one at MAX_ATTEMPTS."""
    lapsed = now - timedelta(seconds=60)
    return [
        Run(
            id=RunId(str(uuid.uuid4())),
            owner=OwnerId("bench"),
            goal="answer",
            status=RunStatus.RUNNING,
            created_at=lapsed,
            started_at=lapsed,
            heartbeat_at=lapsed,
            expires_at=lapsed,
            attempt=MAX_ATTEMPTS if index % 2 else 1,
        )
        for index in range(count)
    ]


async def store(engine: object, runs: list[Run]) -> None:
    """Insert the runs in one executemany."""
    async with engine.begin() as conn:  # type: ignore[attr-defined]
        await conn.execute(delete(runs_table))
        await conn.execute(runs_table.insert(), [run_to_row(run) for run in runs])


async def by_status(engine: object) -> dict[str, int]:
    """Runs by status."""
    async with engine.connect() as conn:  # type: ignore[attr-defined]
        rows = (await conn.execute(select(runs_table.c.status, func.count()).group_by(runs_table.c.status))).all()
    return {str(status): int(count) for status, count in rows}


async def one_pass(repo: SqlaRunRepository, scheduler: RunScheduler) -> tuple[RecoveryPass, float]:
    """One timed recovery pass."""
    recover = RecoverLapsedRuns(runs=repo, scheduler=scheduler, clock=SystemClock(), max_attempts=MAX_ATTEMPTS)
    began = time.perf_counter()
    result = await recover.execute()
    return result, time.perf_counter() - began


async def main(args: argparse.Namespace) -> None:
    """Measure both modes, print, clean up."""
    configure_logging(LoggingSettings(log_level="WARNING"))  # 10,000 INFO lines would be the bench
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    token = secrets.token_hex(4)
    name, queue_name = f"agentkit_bench_{token}", f"agentkit-bench-{token}"
    db_url = await create_database(server_url, name)
    engine = create_engine(db_url, pool_size=30, max_overflow=0)
    redis = create_redis(redis_url)
    try:
        await AlembicSchemaMigrator(engine).upgrade()
        repo = SqlaRunRepository(engine)

        # queue mode: the resumed runs are enqueued
        await store(engine, crashed_runs(args.runs, datetime.now(UTC)))
        jobs = RunJobs(RedisQueue(redis, name=queue_name), job_timeout_s=600)
        await jobs.connect()
        queued = QueueRunScheduler(jobs, events=InMemoryRunEvents())
        result, took = await one_pass(repo, queued)
        queue_depth = await redis.llen(f"saq:{queue_name}:queued")
        print(
            f"queue mode, {args.runs} lapsed runs: one pass {took:.2f} s "
            f"({result.resumed} enqueued, {result.expired} expired; {queue_depth} jobs queued) "
            f"= {took / LEASE_S:.1%} of a {LEASE_S:g} s lease"
        )

        # inline mode: the resumed runs are executed here, to their end
        await store(engine, crashed_runs(args.runs, datetime.now(UTC)))
        trace = SqlaTraceSink(engine)
        loop = AgentLoop(
            memory_loop_deps(
                ScriptedLLMClient([LLMResponse(text="ok")] * args.runs),
                ToolRegistry([]),
                runs=repo,
                trace=trace,
                sessions=InMemorySessionStore(SystemClock()),
                clock=SystemClock(),
                config=AgentConfig(lease_s=LEASE_S),
            )
        )
        # as served: at most a pool's worth of runs in flight, the rest taken as places free up
        recovery = Recovery(runs=repo, clock=SystemClock(), max_attempts=MAX_ATTEMPTS, interval_s=LEASE_S / 2)
        inline = InlineRunScheduler(loop, events=InMemoryRunEvents(), max_in_flight=30, recovery=recovery)
        began = time.perf_counter()
        await inline.start()  # the sweeper's first pass comes at once
        while (await by_status(engine)).get("running", 0):  # noqa: ASYNC110 - polling the database, not a task
            await asyncio.sleep(0.05)
        ended = time.perf_counter() - began
        statuses = await by_status(engine)
        print(
            f"inline mode (at most 30 runs in flight), {args.runs} lapsed runs: all resumed to their end or "
            f"expired {ended:.2f} s after the sweeper started = {ended / LEASE_S:.1%} of a lease; {statuses}"
        )
        await inline.shutdown(5)
        await trace.aclose()
    finally:
        keys = [key async for key in redis.scan_iter(match=f"saq:{queue_name}*", count=1000)]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
        await engine.dispose()
        await drop_database(server_url, name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000, help="lapsed runs")
    asyncio.run(main(parser.parse_args()))
