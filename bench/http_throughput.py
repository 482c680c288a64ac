"""Sustained POST /v1/runs per second through `agentkit serve`, next to a bare Litestar endpoint doing the same writes.

Each AgentKit run makes two tool calls (an async no-op) and answers: three scripted LLM turns, five
trace steps, on real PostgreSQL and Redis (STATE_BACKEND=external). The baseline is
`bench/bare_endpoint.py`: Litestar under uvicorn, raw asyncpg, the same rows in the same tables of
the same scratch database; its /runs makes AgentKit's writes only, /runs/with-reads also AgentKit's
reads. Both servers are subprocesses with one uvicorn worker, configured alike.

1. Closed loop: 50 clients (httpx) post back to back for `--duration` s after a warm-up; completions
   per second, p50 and p99 latency, errors (a non-2xx answer, a run not `succeeded`, an exception).
   Rounds alternate bare, bare with reads, AgentKit; the median round of each is reported.
2. Open loop: requests paced at 75 % of the bare endpoint's rate from step 1, each timed from the
   moment it was due (so a server that falls behind shows it), against both.

The servers are DATABASE_URL's and REDIS_URL's (default: the local ones on 127.0.0.1). The bench
creates a database `agentkit_bench_*` and a Redis key prefix of its own, and removes both at the end.
BENCH_PROFILE=out.prof runs the AgentKit server under cProfile and writes its profile there.

Run: `.venv/bin/python bench/http_throughput.py [--quick] [--duration S]`.
"""

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import httpx
import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    asyncpg_dsn,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.redis import create_redis

CLIENTS = 50
BENCH_DIR = Path(__file__).resolve().parent
PYTHON = sys.executable
API_KEY = "bench-key"
BODY = b'{"goal": "Call the no-op tool twice, then answer."}'
SUCCEEDED = b'"status":"succeeded"'
TOOL_MODULE = '''"""The bench's tool."""

from agentkit import tool


@tool
async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter, so that no two calls are the same.
    """
    return "ok"
'''
SCRIPT = [
    {"text": "step 1", "tool_calls": [{"name": "noop", "arguments": {"i": 1}}], "input_tokens": 10, "output_tokens": 5},
    {"text": "step 2", "tool_calls": [{"name": "noop", "arguments": {"i": 2}}], "input_tokens": 10, "output_tokens": 5},
    {"text": "done", "input_tokens": 10, "output_tokens": 5},
]


@dataclass(frozen=True)
class Target:
    """A server under load: where to post and with which headers."""

    name: str
    url: str
    headers: dict[str, str]
    pid: int


@dataclass(frozen=True)
class Result:
    """One measurement window."""

    rate: float  # completed runs per second
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms: float  # server CPU (user + system) per completed run


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summarize(latencies: list[float], errors: int, duration_s: float, cpu_s: float) -> Result:
    """Rate and percentiles of the successful requests of a window."""
    done = sorted(latencies)
    if not done:
        return Result(rate=0.0, p50_ms=0.0, p99_ms=0.0, errors=errors, cpu_ms=0.0)
    cuts = statistics.quantiles(done, n=100, method="inclusive")
    return Result(
        rate=len(done) / duration_s,
        p50_ms=cuts[49] * 1000,
        p99_ms=cuts[98] * 1000,
        errors=errors,
        cpu_ms=cpu_s / len(done) * 1000,
    )


async def post(client: httpx.AsyncClient, target: Target) -> bool:
    """One run; True when it answered 201 with a succeeded run."""
    try:
        response = await client.post(target.url, content=BODY, headers=target.headers)
    except httpx.HTTPError:
        return False
    return response.status_code == 201 and SUCCEEDED in response.content


async def closed_loop(target: Target, *, clients: int, warmup_s: float, duration_s: float) -> Result:
    """`clients` workers posting back to back; counts what completes inside the window."""
    latencies: list[float] = []
    errors = 0
    began = time.perf_counter()
    window_start, window_end = began + warmup_s, began + warmup_s + duration_s
    cpu_start = 0.0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while (sent := time.perf_counter()) < window_end:
            ok = await post(client, target)
            done = time.perf_counter()
            if window_start <= done <= window_end:
                if ok:
                    latencies.append(done - sent)
                else:
                    errors += 1

    async def cpu_mark() -> None:
        nonlocal cpu_start
        await asyncio.sleep(warmup_s)
        cpu_start = cpu_seconds(target.pid)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client, asyncio.timeout(warmup_s + duration_s + 60):
        await asyncio.gather(cpu_mark(), *(worker(client) for _ in range(clients)))
    return summarize(latencies, errors, duration_s, cpu_seconds(target.pid) - cpu_start)


async def open_loop(target: Target, *, rate: float, warmup_s: float, duration_s: float) -> Result:
    """Requests at a fixed rate whatever the answers do; latency counted from when each was due."""
    latencies: list[float] = []
    errors = 0
    interval = 1.0 / rate
    total = int(rate * (warmup_s + duration_s))
    began = time.perf_counter() + 0.05
    window_start = began + warmup_s

    async def one(client: httpx.AsyncClient, due: float) -> None:
        nonlocal errors
        ok = await post(client, target)
        if due >= window_start:
            if ok:
                latencies.append(time.perf_counter() - due)
            else:
                errors += 1

    limits = httpx.Limits(max_connections=4 * CLIENTS, max_keepalive_connections=4 * CLIENTS)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client, asyncio.timeout(warmup_s + duration_s + 60):
        tasks: list[asyncio.Task[None]] = []
        cpu_start: float | None = None
        for i in range(total):
            due = began + i * interval
            if cpu_start is None and due >= window_start:
                cpu_start = cpu_seconds(target.pid)
            if (delay := due - time.perf_counter()) > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(client, due)))
        await asyncio.gather(*tasks)
    return summarize(latencies, errors, duration_s, cpu_seconds(target.pid) - (cpu_start or 0.0))


@contextlib.asynccontextmanager
async def server(name: str, argv: list[str], env: dict[str, str], port: int, logs: Path) -> AsyncIterator[int]:
    """Start a server subprocess, wait for its /health, stop it (SIGINT, graceful) at the end."""
    log = (logs / f"{name}.log").open("wb")
    proc = await asyncio.create_subprocess_exec(*argv, "--port", str(port), env=env, stdout=log, stderr=log)
    try:
        healthy = False
        async with httpx.AsyncClient(timeout=2.0) as client:
            for _ in range(300):  # 30 s at most
                if proc.returncode is not None:
                    break
                with contextlib.suppress(httpx.HTTPError):
                    healthy = (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200
                if healthy:
                    break
                await asyncio.sleep(0.1)
        if not healthy:
            raise RuntimeError(f"{name} did not start:\n{(logs / f'{name}.log').read_text()[-3000:]}")
        yield proc.pid
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)  # uvicorn shuts down gracefully (and cProfile writes its file)
            try:
                await asyncio.wait_for(proc.wait(), timeout=30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        log.close()


async def check_rows(dsn: str) -> dict[str, tuple[int, float]]:
    """Per owner: runs stored, and steps per run (5 for every complete run)."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT r.owner, count(DISTINCT r.id) AS runs, count(s.id) AS steps"
            " FROM runs r LEFT JOIN steps s ON s.run_id = r.id GROUP BY r.owner"
        )
    finally:
        await conn.close()
    return {row["owner"]: (row["runs"], row["steps"] / max(row["runs"], 1)) for row in rows}


async def measure(server_url: URL, redis_url: str, args: argparse.Namespace) -> None:
    """Create the scratch database, start both servers, load them, print the figures, clean up."""
    token = secrets.token_hex(4)
    name, prefix = f"agentkit_bench_{token}", f"agentkit_bench_{token}:"
    work = Path(tempfile.mkdtemp(prefix="agentkit-http-bench-"))
    db_url = await create_database(server_url, name)
    try:
        engine = create_engine(db_url, pool_size=1, max_overflow=0)
        try:
            await AlembicSchemaMigrator(engine).upgrade()
        finally:
            await engine.dispose()
        await load(asyncpg_dsn(db_url), redis_url, prefix, work, args)
    finally:
        await drop_database(server_url, name)
        redis = create_redis(redis_url)
        try:
            keys = [key async for key in redis.scan_iter(match=f"{prefix}*", count=1000)]
            if keys:
                await redis.delete(*keys)
        finally:
            await redis.aclose()
        shutil.rmtree(work, ignore_errors=True)


async def load(dsn: str, redis_url: str, prefix: str, work: Path, args: argparse.Namespace) -> None:
    """Run the closed-loop rounds and the open-loop phase; print the table."""
    (work / "bench_tools.py").write_text(TOOL_MODULE)
    (work / "script.json").write_bytes(msgspec.json.encode(SCRIPT))
    agentkit_env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": prefix,
        "STATE_BACKEND": "external",
        "API_KEYS": API_KEY,
        "RATE_LIMIT_PER_MIN": "100000000",
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "scripted",
        "LLM_SCRIPT": str(work / "script.json"),
        "AGENTKIT_TOOL_MODULES": "bench_tools",
        "PYTHONPATH": str(work),
    }
    agentkit_argv = [PYTHON, "-m", "agentkit.entrypoints.cli.main", "serve"]
    if args.profile:
        agentkit_argv[1:1] = ["-m", "cProfile", "-o", args.profile]
    bare_env = {**os.environ, "BARE_DATABASE_URL": dsn}
    bare_argv = [PYTHON, str(BENCH_DIR / "bare_endpoint.py")]
    bare_port, agentkit_port = free_port(), free_port()
    async with (
        server("bare", bare_argv, bare_env, bare_port, work) as bare_pid,
        server("agentkit", agentkit_argv, agentkit_env, agentkit_port, work) as agentkit_pid,
    ):
        targets = [
            Target("bare", f"http://127.0.0.1:{bare_port}/runs", {}, bare_pid),
            Target("bare+reads", f"http://127.0.0.1:{bare_port}/runs/with-reads", {}, bare_pid),
            Target("agentkit", f"http://127.0.0.1:{agentkit_port}/v1/runs", {"X-API-Key": API_KEY}, agentkit_pid),
        ]
        closed: dict[str, list[Result]] = {target.name: [] for target in targets}
        for round_no in range(1, args.rounds + 1):
            for target in targets:
                result = await closed_loop(target, clients=CLIENTS, warmup_s=args.warmup, duration_s=args.duration)
                closed[target.name].append(result)
                print(f"round {round_no} {target.name:<11} {fmt(result)}", file=sys.stderr, flush=True)
        best = {name: median_result(results) for name, results in closed.items()}
        paced_rate = 0.75 * best["bare"].rate
        paced: dict[str, Result] = {}
        for target in (targets[0], targets[2]):
            paced[target.name] = await open_loop(
                target, rate=paced_rate, warmup_s=args.warmup, duration_s=args.duration
            )
            print(f"paced   {target.name:<11} {fmt(paced[target.name])}", file=sys.stderr, flush=True)
    report(best, paced, paced_rate, await check_rows(dsn), args)


def median_result(results: list[Result]) -> Result:
    """The round with the median rate (its own percentiles, so the figures belong together)."""
    return sorted(results, key=lambda r: r.rate)[(len(results) - 1) // 2]


def fmt(r: Result) -> str:
    """One line of figures."""
    return (
        f"{r.rate:8.1f} runs/s  p50 {r.p50_ms:7.1f} ms  p99 {r.p99_ms:7.1f} ms  errors {r.errors}"
        f"  cpu {r.cpu_ms:.2f} ms/run"
    )


def report(
    best: dict[str, Result],
    paced: dict[str, Result],
    paced_rate: float,
    rows: dict[str, tuple[int, float]],
    args: argparse.Namespace,
) -> None:
    """Print the Markdown table and the two ratios."""
    print(f"\n{CLIENTS} clients, {args.rounds} round(s) of {args.duration:g} s after {args.warmup:g} s warm-up")
    print("| load | server | runs/s | p50 ms | p99 ms | errors | server CPU ms/run |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in best.items():
        print(
            f"| closed, {CLIENTS} clients | {name} | {r.rate:,.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.errors} "
            f"| {r.cpu_ms:.2f} |"
        )
    for name, r in paced.items():
        print(
            f"| paced {paced_rate:,.0f}/s | {name} | {r.rate:,.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.errors} "
            f"| {r.cpu_ms:.2f} |"
        )
    rate_ratio = best["agentkit"].rate / best["bare"].rate
    reads_ratio = best["agentkit"].rate / best["bare+reads"].rate
    p99_ratio = paced["agentkit"].p99_ms / paced["bare"].p99_ms
    print(f"\nthroughput agentkit / bare: {rate_ratio:.2f}x (aim >= 0.8x; vs bare+reads {reads_ratio:.2f}x)")
    print(f"p99 at 75 % of bare's max, agentkit / bare: {p99_ratio:.2f}x (aim <= 2x)")
    for owner, (runs, per_run) in sorted(rows.items()):
        print(f"rows: {owner[:12]:<12} {runs} runs, {per_run:.2f} steps per run")


def main() -> None:
    """Parse the arguments, find the servers, run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round, for a smoke test")
    parser.add_argument("--duration", type=float, help="seconds measured per window (default 10, quick 3)")
    parser.add_argument("--rounds", type=int, help="closed-loop rounds per server (default 2, quick 1)")
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 10.0)
    args.rounds = args.rounds or (1 if args.quick else 2)
    args.warmup = 1.0 if args.quick else 2.0
    args.profile = os.path.abspath(os.environ["BENCH_PROFILE"]) if os.environ.get("BENCH_PROFILE") else None
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    asyncio.run(measure(server_url, redis_url, args))


if __name__ == "__main__":
    main()
