"""What the HTTP benchmarks share: a scratch database, servers as subprocesses, row checks.

- `scratch_state`: a migrated database `agentkit_bench_*` on DATABASE_URL's server and a Redis key
  prefix of its own, both removed at the end.
- `agentkit_command` and `server`: `agentkit serve` (scripted model, an async no-op tool: three LLM
  steps and two tool steps a run) or any other server, started and stopped gracefully.
- `check_rows`: what the server stored, per owner: runs by status, and succeeded runs missing steps.

The load itself is in `load_loops.py`.
"""

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import httpx
import msgspec
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import AlembicSchemaMigrator, asyncpg_dsn, create_database, create_engine, drop_database
from agentkit.adapters.redis import create_redis
from agentkit.entrypoints.http.auth import owner_id

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
    argv = [PYTHON, "-m", "agentkit", "serve"]
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
