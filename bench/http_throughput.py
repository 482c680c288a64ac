"""Sustained POST /v1/runs per second through `agentkit serve`, next to a bare Litestar endpoint doing the same writes.

Each AgentKit run makes two tool calls (an async no-op) and answers: three scripted LLM turns, five
trace steps, on real PostgreSQL and Redis (STATE_BACKEND=external). The baseline is
`bench/bare_endpoint.py`: Litestar under uvicorn, raw asyncpg, the same rows in the same tables of
the same scratch database; its /runs makes AgentKit's writes only, /runs/with-reads also AgentKit's
reads. Both servers are subprocesses with one uvicorn worker, configured alike.

1. Closed loop: 50 clients (httpx) post back to back for `--duration` s after a warm-up; completions
   per second, p50 and p99 latency, errors (a non-2xx answer, a run not `succeeded`, an exception),
   the server's CPU time per run and how busy the whole machine was. Rounds alternate bare, bare
   with reads, AgentKit; the median round of each is reported.
2. Open loop: requests paced at 75 % of the bare endpoint's rate from step 1, each timed from the
   moment it was due (so a server that falls behind shows it), against both; and AgentKit at 75 %
   of its own rate, for reference. Rounds alternate; the round with the median p99 is reported.

At the end it prints the warnings and errors each server logged, and checks the rows: every run
stored must have succeeded with its five steps.

The servers are DATABASE_URL's and REDIS_URL's (default: the local ones on 127.0.0.1). The bench
creates a database `agentkit_bench_*` and a Redis key prefix of its own, and removes both at the end.
BENCH_PROFILE=out.prof runs the AgentKit server under cProfile and writes its profile there.

Run: `.venv/bin/python bench/http_throughput.py [--quick] [--duration S] [--rounds N]` (about 4 minutes).
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
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
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
from agentkit.application.settings import load_settings

CLIENTS = 50
# Below uvicorn's 5 s keep-alive timeout: a connection the server is closing is never reused (a ReadError).
KEEPALIVE_S = 2.0
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
    errors: Counter[str]
    cpu_ms: float  # server CPU (user + system) per completed run
    host_busy: float  # share of the machine's CPU time (all cores) that was busy in the window


@dataclass(frozen=True)
class Usage:
    """CPU counters at one moment: the server process's, and the whole machine's (busy, total)."""

    server_s: float
    host_busy: int
    host_total: int


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def usage(pid: int) -> Usage:
    """The CPU counters now (Linux /proc): the server's user + system time, the machine's jiffies."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    host = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = host[3] + host[4]  # idle + iowait
    return Usage(
        server_s=(int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"),
        host_busy=sum(host) - idle,
        host_total=sum(host),
    )


def summarize(latencies: list[float], errors: Counter[str], duration_s: float, start: Usage, end: Usage) -> Result:
    """Rate and percentiles of the successful requests of a window, and what they cost in CPU."""
    done = sorted(latencies)
    host_busy = (end.host_busy - start.host_busy) / max(end.host_total - start.host_total, 1)
    if not done:
        return Result(rate=0.0, p50_ms=0.0, p99_ms=0.0, errors=errors, cpu_ms=0.0, host_busy=host_busy)
    cuts = statistics.quantiles(done, n=100, method="inclusive")
    return Result(
        rate=len(done) / duration_s,
        p50_ms=cuts[49] * 1000,
        p99_ms=cuts[98] * 1000,
        errors=errors,
        cpu_ms=(end.server_s - start.server_s) / len(done) * 1000,
        host_busy=host_busy,
    )


async def post(client: httpx.AsyncClient, target: Target) -> str | None:
    """One run; None when it answered 201 with a succeeded run, else what went wrong."""
    try:
        response = await client.post(target.url, content=BODY, headers=target.headers)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    if response.status_code != 201:
        return f"HTTP {response.status_code}"
    return None if SUCCEEDED in response.content else "run not succeeded"


async def closed_loop(target: Target, *, clients: int, warmup_s: float, duration_s: float) -> Result:
    """`clients` workers posting back to back; counts what completes inside the window."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    began = time.perf_counter()
    window_start, window_end = began + warmup_s, began + warmup_s + duration_s
    start = usage(target.pid)

    async def worker(client: httpx.AsyncClient) -> None:
        while (sent := time.perf_counter()) < window_end:
            error = await post(client, target)
            done = time.perf_counter()
            if window_start <= done <= window_end:
                if error is None:
                    latencies.append(done - sent)
                else:
                    errors[error] += 1

    async def mark() -> None:
        nonlocal start
        await asyncio.sleep(warmup_s)
        start = usage(target.pid)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=KEEPALIVE_S)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client, asyncio.timeout(warmup_s + duration_s + 60):
        await asyncio.gather(mark(), *(worker(client) for _ in range(clients)))
    return summarize(latencies, errors, duration_s, start, usage(target.pid))


async def open_loop(target: Target, *, rate: float, warmup_s: float, duration_s: float) -> Result:
    """Requests at a fixed rate whatever the answers do; latency counted from when each was due."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    interval = 1.0 / rate
    total = int(rate * (warmup_s + duration_s))
    began = time.perf_counter() + 0.05
    window_start = began + warmup_s

    async def one(client: httpx.AsyncClient, due: float) -> None:
        error = await post(client, target)
        if due >= window_start:
            if error is None:
                latencies.append(time.perf_counter() - due)
            else:
                errors[error] += 1

    limits = httpx.Limits(
        max_connections=4 * CLIENTS, max_keepalive_connections=4 * CLIENTS, keepalive_expiry=KEEPALIVE_S
    )
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client, asyncio.timeout(warmup_s + duration_s + 60):
        tasks: list[asyncio.Task[None]] = []
        start: Usage | None = None
        for i in range(total):
            due = began + i * interval
            if start is None and due >= window_start:
                start = usage(target.pid)
            if (delay := due - time.perf_counter()) > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(client, due)))
        await asyncio.gather(*tasks)
    return summarize(latencies, errors, duration_s, start or usage(target.pid), usage(target.pid))


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


async def check_rows(dsn: str) -> dict[str, tuple[int, int]]:
    """Per owner (server): the runs stored, and how many of them succeeded with their five steps."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT owner, count(*) AS runs, count(*) FILTER (WHERE status = 'succeeded' AND n = 5) AS complete"
            " FROM (SELECT r.owner, r.status, (SELECT count(*) FROM steps s WHERE s.run_id = r.id) AS n"
            " FROM runs r) AS t GROUP BY owner"
        )
    finally:
        await conn.close()
    return {row["owner"]: (row["runs"], row["complete"]) for row in rows}


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


def agentkit_command(
    dsn: str, redis_url: str, prefix: str, work: Path, profile: str | None
) -> tuple[list[str], dict[str, str]]:
    """`agentkit serve` on the bench database, with the scripted model and the no-op tool in `work`."""
    (work / "bench_tools.py").write_text(TOOL_MODULE)
    (work / "script.json").write_bytes(msgspec.json.encode(SCRIPT))
    env = {
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
    argv = [PYTHON, "-m", "agentkit.entrypoints.cli.main", "serve"]
    if profile:
        argv[1:1] = ["-m", "cProfile", "-o", profile]
    return argv, env


Job = tuple[str, Callable[[], Awaitable[Result]]]


async def in_rounds(label: str, jobs: list[Job], rounds: int, *, by_p99: bool = False) -> dict[str, Result]:
    """Run the jobs one after another, `rounds` times over; the median round of each."""
    results: dict[str, list[Result]] = {name: [] for name, _ in jobs}
    for round_no in range(1, rounds + 1):
        for name, job in jobs:
            result = await job()
            results[name].append(result)
            print(f"{label} {round_no} {name:<13} {fmt(result)}", file=sys.stderr, flush=True)
    return {name: median_result(each, by_p99=by_p99) for name, each in results.items()}


async def load(dsn: str, redis_url: str, prefix: str, work: Path, args: argparse.Namespace) -> None:
    """Start both servers, run the closed-loop rounds, then the paced ones; print the figures."""
    agentkit_argv, agentkit_env = agentkit_command(dsn, redis_url, prefix, work, args.profile)
    # the same number of database connections as AgentKit's default pool
    bare_env = {**os.environ, "BARE_DATABASE_URL": dsn, "BARE_POOL_SIZE": str(load_settings({}).database_pool_size)}
    bare_argv = [PYTHON, str(BENCH_DIR / "bare_endpoint.py")]
    bare_port, agentkit_port = free_port(), free_port()
    warmup_s, duration_s = args.warmup, args.duration
    async with (
        server("bare", bare_argv, bare_env, bare_port, work) as bare_pid,
        server("agentkit", agentkit_argv, agentkit_env, agentkit_port, work) as agentkit_pid,
    ):
        bare = Target("bare", f"http://127.0.0.1:{bare_port}/runs", {}, bare_pid)
        reads = Target("bare+reads", f"http://127.0.0.1:{bare_port}/runs/with-reads", {}, bare_pid)
        agentkit = Target("agentkit", f"http://127.0.0.1:{agentkit_port}/v1/runs", {"X-API-Key": API_KEY}, agentkit_pid)

        def closed(target: Target) -> Job:
            return target.name, lambda: closed_loop(target, clients=CLIENTS, warmup_s=warmup_s, duration_s=duration_s)

        def paced(name: str, target: Target, rate: float) -> Job:
            return name, lambda: open_loop(target, rate=rate, warmup_s=warmup_s, duration_s=duration_s)

        best = await in_rounds("closed", [closed(bare), closed(reads), closed(agentkit)], args.rounds)
        rate, own_rate = 0.75 * best["bare"].rate, 0.75 * best["agentkit"].rate
        jobs = [paced("bare", bare, rate), paced("agentkit", agentkit, rate), paced("agentkit@own", agentkit, own_rate)]
        slow = await in_rounds("paced", jobs, args.rounds, by_p99=True)
    for name in ("bare", "agentkit"):
        log_problems(name, work / f"{name}.log")
    report(best, slow, rate, own_rate, await check_rows(dsn), args)


def log_problems(name: str, path: Path) -> None:
    """Print the warnings and errors a server logged, counted by event, with the first of each."""
    events: Counter[str] = Counter()
    first: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = msgspec.json.decode(line)
        except msgspec.DecodeError:
            record = None
        if isinstance(record, dict) and record.get("level") in ("warning", "error", "critical"):
            event = f"{record['level']} {record.get('event')}"
            if "exception" in record:  # the exception's last line says what it was
                event += ": " + str(record["exception"]).strip().splitlines()[-1][:200]
        elif line.startswith(("WARNING", "ERROR", "CRITICAL")):
            event = line[:100]
        else:
            continue
        events[event] += 1
        first.setdefault(event, line[:300])
    for event, count in events.most_common():
        print(f"{name} log: {count} x {event}\n  first: {first[event]}", file=sys.stderr)


def median_result(results: list[Result], *, by_p99: bool = False) -> Result:
    """The median round by rate (or by p99), whole, so that its figures belong together."""
    ordered = sorted(results, key=lambda r: r.p99_ms if by_p99 else r.rate)
    return ordered[(len(ordered) - 1) // 2]


def fmt(r: Result) -> str:
    """One line of figures."""
    return (
        f"{r.rate:8.1f} runs/s  p50 {r.p50_ms:7.1f} ms  p99 {r.p99_ms:7.1f} ms"
        f"  server cpu {r.cpu_ms:.2f} ms/run  host busy {r.host_busy:.0%}"
        f"  errors {r.errors.total()} {dict(r.errors) or ''}"
    )


def report(
    best: dict[str, Result],
    paced: dict[str, Result],
    rate: float,
    own_rate: float,
    rows: dict[str, tuple[int, int]],
    args: argparse.Namespace,
) -> None:
    """Print the Markdown table and the two ratios."""
    print(f"\n{args.rounds} round(s) of {args.duration:g} s after {args.warmup:g} s warm-up; the median round of each")
    print("| load | server | runs/s | p50 ms | p99 ms | errors | server CPU ms/run | host CPU busy |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [(f"closed, {CLIENTS} clients", name, r) for name, r in best.items()]
    lines += [(f"paced {own_rate if name.endswith('@own') else rate:,.0f}/s", name, r) for name, r in paced.items()]
    for load_name, name, r in lines:
        print(
            f"| {load_name} | {name} | {r.rate:,.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.errors.total()} "
            f"| {r.cpu_ms:.2f} | {r.host_busy:.0%} |"
        )
    rate_ratio = best["agentkit"].rate / best["bare"].rate
    reads_ratio = best["agentkit"].rate / best["bare+reads"].rate
    p99_ratio = paced["agentkit"].p99_ms / paced["bare"].p99_ms
    own_ratio = paced["agentkit@own"].p99_ms / paced["bare"].p99_ms
    print(f"\nthroughput agentkit / bare: {rate_ratio:.2f}x (aim >= 0.8x; against bare+reads {reads_ratio:.2f}x)")
    print(f"p99 at 75 % of bare's max rate, agentkit / bare: {p99_ratio:.2f}x (aim <= 2x)")
    print(f"p99 at 75 % of agentkit's own max rate, against bare's at 75 % of its: {own_ratio:.2f}x")
    for owner, (runs, complete) in sorted(rows.items()):
        server_name = "bare" if owner == "bare" else "agentkit"
        print(f"rows: {server_name} stored {runs} runs, {runs - complete} of them not succeeded with 5 steps")


def main() -> None:
    """Parse the arguments, find the servers, run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round, for a smoke test")
    parser.add_argument("--duration", type=float, help="seconds measured per window (default 10, quick 3)")
    parser.add_argument("--rounds", type=int, help="rounds of each phase per server (default 3, quick 1)")
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 10.0)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = 1.0 if args.quick else 2.0
    args.profile = os.path.abspath(os.environ["BENCH_PROFILE"]) if os.environ.get("BENCH_PROFILE") else None
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    asyncio.run(measure(server_url, redis_url, args))


if __name__ == "__main__":
    main()
