"""Queue mode: how soon a worker picks an enqueued run up, next to a raw Redis LPUSH/BLMOVE round trip.

1. Pickup latency, one run at a time (nothing else queued): the run is stored pending, then enqueued
   (`RunJobs.enqueue`, what POST /v1/runs does in queue mode) at t0; the worker process claims it
   (`started_at`) and records its first step (the scripted model answers at once). Reported: p50 and
   p99 of t0 -> claim and t0 -> first step, against a raw round trip in the same run: the bench
   LPUSHes a timestamp, a consumer process BLMOVEs it and notes when it arrived.
2. Throughput: RUNS runs enqueued at once, timed until the last one ended, with 1 and with 2 worker
   processes (WORKER_CONCURRENCY each).

Workers are `agentkit worker` subprocesses on DATABASE_URL's PostgreSQL and REDIS_URL's Redis (default:
the local ones), in a scratch database and key prefix removed at the end.

Run: `.venv/bin/python bench/queue_pickup.py [--samples N] [--runs N]` (about a minute).
"""

import argparse
import asyncio
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from saq.queue.redis import RedisQueue
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.adapters.postgres.tables import steps as steps_table
from agentkit.adapters.queue import RunJobs
from agentkit.adapters.redis import create_redis
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run

PYTHON = sys.executable
CONCURRENCY = 20
RAW_CONSUMER = """
import sys, time, redis
r = redis.Redis.from_url(sys.argv[1])
src, dst, done = sys.argv[2], sys.argv[3], sys.argv[4]
while True:
    item = r.blmove(src, dst, 1.0, "LEFT", "RIGHT")
    if item is not None:
        r.rpush(done, f"{item.decode()} {time.time()}")
"""


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


@contextmanager
def workers(count: int, env: dict[str, str], logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` worker processes; stopped (SIGTERM) at the end."""
    procs = []
    try:
        for index in range(count):
            log = (logs / f"worker-{index}.log").open("ab")
            procs.append(
                subprocess.Popen([PYTHON, "-m", "agentkit", "worker"], env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
            )
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


async def wait_ended(repo: SqlaRunRepository, run_ids: list[RunId], timeout_s: float = 300) -> list[Run]:
    """Poll until every run ended."""
    deadline = time.monotonic() + timeout_s
    pending = set(run_ids)
    ended: dict[RunId, Run] = {}
    while pending:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} runs did not end")
        for run_id in list(pending):
            run = await repo.get(run_id)
            if run is not None and run.is_terminal:
                ended[run_id] = run
                pending.discard(run_id)
        if pending:
            await asyncio.sleep(0.02)  # slow enough not to compete with the worker for the CPU
    return [ended[run_id] for run_id in run_ids]


async def succeeded(engine: AsyncEngine) -> int:
    """Runs that succeeded so far (the scratch database holds only the bench's)."""
    async with engine.connect() as conn:
        query = select(func.count()).select_from(runs_table).where(runs_table.c.status == "succeeded")
        return int((await conn.execute(query)).scalar_one())


async def until_succeeded(engine: AsyncEngine, *, expected_total: int, timeout_s: float = 300) -> None:
    """Wait until `expected_total` runs succeeded."""
    deadline = time.monotonic() + timeout_s
    while await succeeded(engine) < expected_total:
        if time.monotonic() > deadline:
            raise RuntimeError("the runs did not all succeed")
        await asyncio.sleep(0.01)


def new_run() -> Run:
    """A pending run, as CreateRun stores it."""
    now = datetime.now(UTC)
    return Run(
        id=RunId(str(uuid.uuid4())),
        owner=OwnerId("bench"),
        goal="answer",
        created_at=now,
        expires_at=now + timedelta(seconds=30),
    )


async def main(args: argparse.Namespace) -> None:
    """Set up the scratch state, measure, print, clean up."""
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    token = secrets.token_hex(4)
    prefix, queue_name = f"agentkit_bench_{token}:", f"agentkit-bench-{token}"
    work = Path(tempfile.mkdtemp(prefix="agentkit-queue-bench-"))
    db_url = await create_database(server_url, f"agentkit_bench_{token}")
    engine = create_engine(db_url, pool_size=5, max_overflow=0)
    redis = create_redis(redis_url)
    raw = None
    try:
        await AlembicSchemaMigrator(engine).upgrade()
        repo = SqlaRunRepository(engine)
        jobs = RunJobs(RedisQueue(redis, name=queue_name), job_timeout_s=600)
        await jobs.connect()
        script = work / "script.json"
        script.write_text('[{"text": "ok"}]')
        env = {
            **{k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ},
            "DATABASE_URL": db_url.set(drivername="postgresql").render_as_string(hide_password=False),
            "REDIS_URL": redis_url,
            "STATE_BACKEND": "external",
            "REDIS_KEY_PREFIX": prefix,
            "RUN_QUEUE_NAME": queue_name,
            "LLM_PROVIDER": "scripted",
            "LLM_SCRIPT": str(script),
            "WORKER_CONCURRENCY": str(CONCURRENCY),
            "LOG_LEVEL": "WARNING",
            "LOG_FORMAT": "json",
        }

        # 1. pickup latency, one at a time, interleaved with the raw round trips
        src, dst, done = f"{prefix}raw:src", f"{prefix}raw:dst", f"{prefix}raw:done"
        raw = subprocess.Popen([PYTHON, "-c", RAW_CONSUMER, redis_url, src, dst, done])  # noqa: S603, ASYNC220
        pickup, first_step, raw_trip = [], [], []
        with workers(1, env, work):
            for _ in range(5):  # warm-up: the worker's imports, connections, SAQ's scripts
                warm = new_run()
                await repo.add(warm)
                await jobs.enqueue(warm)
                await wait_ended(repo, [warm.id], timeout_s=120)
            for _ in range(args.samples):
                run = new_run()
                await repo.add(run)
                t0 = time.time()
                await jobs.enqueue(run)
                [ended] = await wait_ended(repo, [run.id])
                assert ended.started_at is not None
                pickup.append((ended.started_at.timestamp() - t0) * 1000)
                async with engine.connect() as conn:
                    step_at = (
                        await conn.execute(select(steps_table.c.created_at).where(steps_table.c.run_id == run.id))
                    ).scalar_one()
                first_step.append((step_at.timestamp() - t0) * 1000)
                sent = time.time()
                await redis.lpush(src, str(sent))
                reply = await redis.blpop([done], timeout=10)
                assert reply is not None
                item = reply[1]
                stamp, arrived = (item.decode() if isinstance(item, bytes) else item).split(" ")
                raw_trip.append((float(arrived) - float(stamp)) * 1000)
                await asyncio.sleep(0.01)

        # 2. throughput with 1 and 2 workers
        rates = {}
        for count in (1, 2):
            with workers(count, env, work):
                warm_runs = [new_run() for _ in range(count * 3)]
                for run in warm_runs:
                    await repo.add(run)
                    await jobs.enqueue(run)
                await wait_ended(repo, [r.id for r in warm_runs], timeout_s=120)
                total_before = await succeeded(engine)
                batch = [new_run() for _ in range(args.runs)]
                for run in batch:
                    await repo.add(run)
                began = time.monotonic()
                for run in batch:
                    await jobs.enqueue(run)
                await until_succeeded(engine, expected_total=total_before + args.runs)
                took = time.monotonic() - began
                rates[count] = args.runs / took

        print(f"pickup, {args.samples} runs one at a time (ms):")
        for name, values in (
            ("enqueue -> claimed", pickup),
            ("enqueue -> first step", first_step),
            ("raw LPUSH/BLMOVE", raw_trip),
        ):
            print(f"  {name:24} p50 {statistics.median(values):6.2f}   p99 {percentile(values, 99):6.2f}")
        p50 = statistics.median(first_step) - statistics.median(raw_trip)
        p99 = percentile(first_step, 99) - percentile(raw_trip, 99)
        print(f"  first step over raw:     p50 +{p50:.2f} ms (aim 5)   p99 +{p99:.2f} ms (aim 20)")
        print(f"throughput, {args.runs} runs enqueued at once, WORKER_CONCURRENCY={CONCURRENCY}:")
        print(f"  1 worker  {rates[1]:7.1f} runs/s")
        print(f"  2 workers {rates[2]:7.1f} runs/s ({rates[2] / rates[1]:.2f}x)")
    finally:
        if raw is not None:
            raw.kill()
        keys = [key async for key in redis.scan_iter(match=f"{prefix}*", count=1000)]
        keys += [key async for key in redis.scan_iter(match=f"saq:{queue_name}*", count=1000)]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
        await engine.dispose()
        await drop_database(server_url, f"agentkit_bench_{token}")
        if args.keep_logs:
            print(f"worker logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="runs timed one at a time")
    parser.add_argument("--runs", type=int, default=500, help="runs enqueued at once for the throughput")
    parser.add_argument("--keep-logs", action="store_true", help="keep the workers' logs")
    asyncio.run(main(parser.parse_args()))
