"""What the HTTP benchmarks share: a scratch database, servers as subprocesses, load generators, row checks.

- `scratch_state`: a migrated database `agentkit_bench_*` on DATABASE_URL's server and a Redis key
  prefix of its own, both removed at the end.
- `agentkit_command` and `server`: `agentkit serve` (scripted model, an async no-op tool: three LLM
  steps and two tool steps a run) or any other server, started and stopped gracefully.
- `closed_loop` and `open_loop`: back-to-back clients, and requests paced at a fixed rate whatever
  the answers do, each timed from the moment it was due (so a server that falls behind shows it);
  through httpx (`HttpxLoad`) or a raw HTTP/1.1 client that costs far less CPU (`RawLoad`).
- `check_rows`: what the server stored, per owner: runs by status, and succeeded runs missing steps.
"""

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
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import asyncpg  # type: ignore[import-untyped]
import httpx
import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import AlembicSchemaMigrator, asyncpg_dsn, create_database, create_engine, drop_database
from agentkit.adapters.redis import create_redis
from agentkit.entrypoints.http.auth import owner_id
from raw_http import RawLoadClient

# Below uvicorn's 5 s keep-alive timeout: a connection the server is closing is never reused (a ReadError).
KEEPALIVE_S = 2.0
BENCH_DIR = Path(__file__).resolve().parent
PYTHON = sys.executable
API_KEY = "bench-key"
BODY = b'{"goal": "Call the no-op tool twice, then answer."}'
SUCCEEDED = b'"status":"succeeded"'
STEPS_PER_RUN = 5
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
class Usage:
    """CPU counters at one moment: the server process's, and the whole machine's (busy, total)."""

    server_s: float
    host_busy: int
    host_total: int


@dataclass(frozen=True)
class Result:
    """One measurement window of the requests that succeeded."""

    rate: float  # completed runs per second
    p50_ms: float
    p99_ms: float
    errors: Counter[str]
    cpu_ms: float  # server CPU (user + system) per completed run
    host_busy: float  # share of the machine's CPU time (all cores) that was busy in the window


@dataclass
class Window:
    """What an open loop saw inside its measurement window: each answer's latency by outcome."""

    duration_s: float
    start: Usage
    end: Usage
    latencies: dict[str, list[float]] = field(default_factory=dict)  # outcome -> seconds from due to answer
    served: dict[str, list[float]] = field(default_factory=dict)  # outcome -> seconds from sent to answer
    send_lag: list[float] = field(default_factory=list)  # seconds from due to sent: the generator's own delay
    generator_cpu_s: float = 0.0  # CPU the load generator (this process) used meanwhile

    @property
    def server_busy(self) -> float:
        """The server's CPU time over the window's wall time (1.0: one core, all the time)."""
        return (self.end.server_s - self.start.server_s) / self.duration_s

    @property
    def host_busy(self) -> float:
        """The share of the machine's CPU time (all cores) that was busy."""
        return (self.end.host_busy - self.start.host_busy) / max(self.end.host_total - self.start.host_total, 1)


@dataclass(frozen=True)
class Scratch:
    """The bench's own state: a migrated database, a Redis key prefix, a work folder."""

    dsn: str
    redis_url: str
    prefix: str
    work: Path


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


def percentile_ms(latencies: list[float], q: int) -> float:
    """The q-th percentile in milliseconds (0 for no samples)."""
    if not latencies:
        return 0.0
    if len(latencies) == 1:
        return latencies[0] * 1000
    return statistics.quantiles(sorted(latencies), n=100, method="inclusive")[q - 1] * 1000


def summarize(latencies: list[float], errors: Counter[str], duration_s: float, start: Usage, end: Usage) -> Result:
    """Rate and percentiles of the successful requests of a window, and what they cost in CPU."""
    host_busy = (end.host_busy - start.host_busy) / max(end.host_total - start.host_total, 1)
    if not latencies:
        return Result(rate=0.0, p50_ms=0.0, p99_ms=0.0, errors=errors, cpu_ms=0.0, host_busy=host_busy)
    return Result(
        rate=len(latencies) / duration_s,
        p50_ms=percentile_ms(latencies, 50),
        p99_ms=percentile_ms(latencies, 99),
        errors=errors,
        cpu_ms=(end.server_s - start.server_s) / len(latencies) * 1000,
        host_busy=host_busy,
    )


def outcome(status: int, content_type: str, body: bytes) -> str:
    """ "ok" for a 201 with a succeeded run, else what happened ("HTTP 503 overloaded", ...)."""
    if status == 201:
        return "ok" if SUCCEEDED in body else "run not succeeded"
    code = ""
    if content_type == "application/problem+json":
        with contextlib.suppress(msgspec.DecodeError):
            problem = msgspec.json.decode(body)
            code = str(problem.get("code", "")) if isinstance(problem, dict) else ""
    return f"HTTP {status} {code}".rstrip()


class LoadClient(Protocol):
    """Posts BODY to a target and says how it went; one per load loop."""

    async def post(self, target: Target) -> str:
        """One run: "ok", or what happened instead."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...


class HttpxLoad(LoadClient):
    """Load through httpx, kept-alive connections (what `bench/http_throughput.py` was measured with)."""

    def __init__(self, connections: int) -> None:
        limits = httpx.Limits(
            max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=KEEPALIVE_S
        )
        self._client = httpx.AsyncClient(limits=limits, timeout=30.0)

    async def post(self, target: Target) -> str:
        try:
            response = await self._client.post(target.url, content=BODY, headers=target.headers)
        except httpx.HTTPError as exc:
            return type(exc).__name__
        return outcome(response.status_code, response.headers.get("content-type", ""), response.content)

    async def aclose(self) -> None:
        await self._client.aclose()


class RawLoad(LoadClient):
    """Load through `raw_http.RawLoadClient`: a few tens of microseconds of CPU a request."""

    def __init__(self, connections: int) -> None:
        self._client = RawLoadClient(BODY, connections=connections, keepalive_s=KEEPALIVE_S)

    async def post(self, target: Target) -> str:
        try:
            return outcome(*await self._client.post(target.url, target.headers))
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
            return type(exc).__name__

    async def aclose(self) -> None:
        await self._client.aclose()


async def closed_loop(
    target: Target,
    *,
    clients: int,
    warmup_s: float,
    duration_s: float,
    load: Callable[[int], LoadClient] = HttpxLoad,
) -> Result:
    """`clients` workers posting back to back; counts what completes inside the window."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    began = time.perf_counter()
    window_start, window_end = began + warmup_s, began + warmup_s + duration_s
    start = usage(target.pid)

    async def worker(client: LoadClient) -> None:
        while (sent := time.perf_counter()) < window_end:
            answer = await client.post(target)
            done = time.perf_counter()
            if window_start <= done <= window_end:
                if answer == "ok":
                    latencies.append(done - sent)
                else:
                    errors[answer] += 1

    async def mark() -> None:
        nonlocal start
        await asyncio.sleep(warmup_s)
        start = usage(target.pid)

    client = load(clients)
    try:
        async with asyncio.timeout(warmup_s + duration_s + 60):
            await asyncio.gather(mark(), *(worker(client) for _ in range(clients)))
    finally:
        await client.aclose()
    return summarize(latencies, errors, duration_s, start, usage(target.pid))


async def open_loop(
    target: Target,
    *,
    rate: float,
    warmup_s: float,
    duration_s: float,
    connections: int,
    load: Callable[[int], LoadClient] = HttpxLoad,
) -> Window:
    """Requests due at a fixed rate whatever the answers do; each answer timed from when it was due."""
    interval = 1.0 / rate
    total = int(rate * (warmup_s + duration_s))
    began = time.perf_counter() + 0.05
    window_start = began + warmup_s
    window = Window(duration_s=duration_s, start=usage(target.pid), end=usage(target.pid))

    async def one(client: LoadClient, due: float) -> None:
        sent = time.perf_counter()
        answer = await client.post(target)
        if due >= window_start:
            done = time.perf_counter()
            window.latencies.setdefault(answer, []).append(done - due)
            window.served.setdefault(answer, []).append(done - sent)
            window.send_lag.append(sent - due)

    client = load(connections)
    try:
        async with asyncio.timeout(warmup_s + duration_s + 120):
            tasks: list[asyncio.Task[None]] = []
            started = False
            cpu_start = time.process_time()
            for i in range(total):
                due = began + i * interval
                if not started and due >= window_start:
                    window.start, started, cpu_start = usage(target.pid), True, time.process_time()
                if (delay := due - time.perf_counter()) > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(client, due)))
            window.end = usage(target.pid)  # the window's load is sent; what follows is the drain
            window.generator_cpu_s = time.process_time() - cpu_start
            await asyncio.gather(*tasks)
    finally:
        await client.aclose()
    return window


def agentkit_command(
    scratch: Scratch, *, api_key: str = API_KEY, profile: str | None = None, **settings: str
) -> tuple[list[str], dict[str, str]]:
    """`agentkit serve` on the bench database, with the scripted model and the no-op tool; `settings` as env."""
    (scratch.work / "bench_tools.py").write_text(TOOL_MODULE)
    (scratch.work / "script.json").write_bytes(msgspec.json.encode(SCRIPT))
    env = {
        **os.environ,
        "DATABASE_URL": scratch.dsn,
        "REDIS_URL": scratch.redis_url,
        "REDIS_KEY_PREFIX": scratch.prefix,
        "STATE_BACKEND": "external",
        "API_KEYS": api_key,
        "RATE_LIMIT_PER_MIN": "100000000",
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "scripted",
        "LLM_SCRIPT": str(scratch.work / "script.json"),
        "AGENTKIT_TOOL_MODULES": "bench_tools",
        "PYTHONPATH": str(scratch.work),
        **{name.upper(): value for name, value in settings.items()},
    }
    argv = [PYTHON, "-m", "agentkit.entrypoints.cli.main", "serve"]
    if profile:
        argv[1:1] = ["-m", "cProfile", "-o", profile]
    return argv, env


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


@contextlib.asynccontextmanager
async def scratch_state(server_url: URL, redis_url: str) -> AsyncIterator[Scratch]:
    """A migrated scratch database and a Redis key prefix of the bench's own; removed at the end."""
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
        yield Scratch(dsn=asyncpg_dsn(db_url), redis_url=redis_url, prefix=prefix, work=work)
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


@dataclass(frozen=True)
class Rows:
    """What one owner's server stored."""

    by_status: dict[str, int]
    succeeded_missing_steps: int  # succeeded runs with fewer than STEPS_PER_RUN steps
    steps_missing: int  # the steps those runs lack, in all

    @property
    def runs(self) -> int:
        return sum(self.by_status.values())


async def check_rows(dsn: str) -> dict[str, Rows]:
    """Per owner (`bare`, or the owner id of an API key): runs by status, and steps missing from succeeded runs."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT r.owner, r.status, count(*) AS runs,"
            " count(*) FILTER (WHERE r.status = 'succeeded' AND n.steps < $1) AS short,"
            " coalesce(sum($1 - n.steps) FILTER (WHERE r.status = 'succeeded' AND n.steps < $1), 0) AS missing"
            " FROM runs r CROSS JOIN LATERAL (SELECT count(*) AS steps FROM steps s WHERE s.run_id = r.id) n"
            " GROUP BY r.owner, r.status",
            STEPS_PER_RUN,
        )
    finally:
        await conn.close()
    found: dict[str, Rows] = {}
    for row in rows:
        before = found.get(row["owner"], Rows(by_status={}, succeeded_missing_steps=0, steps_missing=0))
        found[row["owner"]] = Rows(
            by_status={**before.by_status, row["status"]: row["runs"]},
            succeeded_missing_steps=before.succeeded_missing_steps + row["short"],
            steps_missing=before.steps_missing + int(row["missing"]),
        )
    return found


def owner_of(api_key: str) -> str:
    """The owner id a server stores for runs made with this key."""
    return str(owner_id(api_key))


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
