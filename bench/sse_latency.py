"""Live events: from a step being recorded to its SSE event reaching a client, next to a raw Redis round trip.

`agentkit serve` (a subprocess, on PostgreSQL and Redis, RUN_MODE=inline) runs runs of 50 turns,
each turn an LLM call of the scripted model and a call of a tool that sleeps 5 ms: 101 steps a run,
spread out the way a real run's steps are. An httpx client follows each run on GET
/v1/runs/{id}/events; a step's latency is the time its event was read by the client minus its
`created_at` (the server's clock: the same machine's), for the steps recorded after the client
connected (earlier ones come from the backlog at once, and are left out).

In the same run, the raw path the events take: one redis-py client XADDs an entry holding the time,
every 5 ms, and another reads the stream with XREAD BLOCK; the latency is the read time minus the
time in the entry. And the path alone, with nothing else for the server to do: the app in this
process (uvicorn on loopback, the log on Redis), an event appended every 5 ms, the time until the
httpx client in the same process has it.

Needs DATABASE_URL and REDIS_URL. Run: `.venv/bin/python bench/sse_latency.py [--quick]`.
"""

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import uvicorn
from dishka import Provider, Scope
from dishka.integrations.litestar import LitestarProvider

from agentkit.adapters.memory import InMemoryRunRepository
from agentkit.adapters.postgres import parse_database_url
from agentkit.adapters.redis import RedisRunEventLog, create_redis
from agentkit.application.ports.run_event_log import RunEventLog, StatusEvent, StepEvent
from agentkit.application.ports.run_repository import RunRepository
from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.run import Run
from agentkit.domain.steps import ToolStep
from agentkit.domain.tools import ToolResult
from agentkit.entrypoints.http.auth import owner_id
from agentkit.entrypoints.wiring import make_container
from agentkit.entrypoints.wiring.serving import http_app
from agentkit.entrypoints.wiring.settings import load_settings
from http_harness import API_KEY, agentkit_command, free_port, scratch_state, server

TURNS = 50
PAUSE_S = 0.005
TOOL_MODULE = f'''"""The latency bench's tool."""

import asyncio

from agentkit import tool


@tool
async def pause(i: int) -> str:
    """Wait a moment, as a quick tool would.

    Args:
        i: A counter, so that no two calls are the same.
    """
    await asyncio.sleep({PAUSE_S})
    return "ok"
'''


def script() -> list[dict[str, object]]:
    turns: list[dict[str, object]] = [
        {"tool_calls": [{"name": "pause", "arguments": {"i": i}}], "input_tokens": 10, "output_tokens": 5}
        for i in range(TURNS)
    ]
    return [*turns, {"text": "done", "input_tokens": 10, "output_tokens": 5}]


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p99 and max in milliseconds."""
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"n": len(ordered), "p50": cuts[49] * 1e3, "p99": cuts[98] * 1e3, "max": ordered[-1] * 1e3}


class Sample(msgspec.Struct, frozen=True):
    """One step: recorded → in the stream (the entry id's time, Redis's clock) → read by the client."""

    total: float
    to_stream: float
    from_stream: float


async def follow(client: httpx.AsyncClient, run_id: str) -> list[Sample]:
    """The latencies of the steps recorded once the stream was open."""
    found: list[Sample] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        opened = time.time()
        kind, data, event_id = None, None, ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and kind is not None and data is not None:
                now = time.time()
                event = json.loads(data)
                if kind == "step":
                    recorded = datetime.fromisoformat(event["created_at"]).timestamp()
                    added = int(event_id.partition("-")[0]) / 1e3
                    if recorded >= opened:
                        found.append(Sample(total=now - recorded, to_stream=added - recorded, from_stream=now - added))
                elif event["status"] not in ("pending", "running"):
                    break
                kind, data = None, None
    return found


async def sse_latencies(base_url: str, runs: int) -> list[Sample]:
    samples: list[Sample] = []
    async with httpx.AsyncClient(base_url=base_url, headers={"X-API-Key": API_KEY}, timeout=60) as client:
        for _ in range(runs):
            created = await client.post("/v1/runs", json={"goal": "pause"}, headers={"Prefer": "respond-async"})
            samples.extend(await follow(client, created.json()["id"]))
    return samples


async def raw_latencies(redis_url: str, count: int) -> list[float]:
    """XADD a timestamp every PAUSE_S; XREAD BLOCK it from another client."""
    writer, reader = create_redis(redis_url), create_redis(redis_url, socket_timeout_s=10)
    key = f"agentkit_bench_raw:{secrets.token_hex(4)}"
    samples: list[float] = []

    async def read() -> None:
        last = "0-0"
        while len(samples) < count:
            reply: Any = await reader.xread({key: last}, count=100, block=5000)
            now = time.time()
            for _, entries in reply or ():
                for entry_id, fields in entries:
                    last = entry_id.decode()
                    samples.append(now - float(fields[b"t"]))

    reading = asyncio.create_task(read())
    try:
        for _ in range(count):
            await writer.xadd(key, {b"t": repr(time.time()).encode()}, maxlen=10_000, approximate=True)
            await asyncio.sleep(PAUSE_S)
        await asyncio.wait_for(reading, 30)
    finally:
        await writer.delete(key)
        await writer.aclose()
        await reader.aclose()
    return samples


class _PathAlone(Provider):
    """The log on Redis and the runs in memory, for the in-process probe."""

    def __init__(self, log: RunEventLog, runs: RunRepository) -> None:
        super().__init__()
        self.provide(lambda: log, provides=RunEventLog, scope=Scope.APP)
        self.provide(lambda: runs, provides=RunRepository, scope=Scope.APP)


async def path_alone(redis_url: str, count: int) -> list[float]:
    """append → the client has the event, with the server doing nothing else (same process, loopback)."""
    key = "bench-key-" + "k" * 16
    settings = load_settings({"STATE_BACKEND": "memory", "API_KEYS": key, "LOG_LEVEL": "WARNING"})
    redis = create_redis(redis_url, socket_timeout_s=30)
    prefix = f"agentkit_bench_probe_{secrets.token_hex(4)}:"
    log = RedisRunEventLog(redis, prefix=prefix, max_block_s=15)
    runs = InMemoryRunRepository()
    run = Run(id=RunId(str(uuid.uuid4())), owner=owner_id(key), goal="probe", created_at=datetime.now(UTC))
    await runs.add(run)
    log.append(run.id, StatusEvent(run=run))
    app = http_app(make_container(settings, LitestarProvider(), _PathAlone(log, runs)), settings)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on"))
    serving = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:  # noqa: ASYNC110 - uvicorn says so by a flag, not an event
        await asyncio.sleep(0.01)
    samples: list[float] = []
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        async with (
            httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=30) as client,
            client.stream("GET", f"/v1/runs/{run.id}/events") as response,
        ):
            lines = response.aiter_lines()
            async for line in lines:  # the first event: the run accepted
                if line == "":
                    break
            for step_no in range(1, count + 1):
                sent = time.perf_counter()
                step = ToolStep(
                    run_id=run.id,
                    step_no=step_no,
                    created_at=datetime.now(UTC),
                    latency_ms=1.0,
                    call_id=ToolCallId("c"),
                    tool_name="pause",
                    arguments={"i": step_no},
                    result=ToolResult(ok=True, output="ok"),
                )
                log.append(run.id, StepEvent(step=step))
                async for line in lines:
                    if line == "":
                        break
                samples.append(time.perf_counter() - sent)
                await asyncio.sleep(PAUSE_S)
    finally:
        uv.should_exit = True
        await serving
        sock.close()
        await redis.delete(log.key(run.id))
        await redis.aclose()
    return samples


async def main(quick: bool) -> None:
    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url:
        raise SystemExit("set DATABASE_URL and REDIS_URL")
    runs = 3 if quick else 20
    async with scratch_state(parse_database_url(database_url), redis_url) as scratch:
        argv, env = agentkit_command(scratch, run_timeout_s="600", max_steps=str(TURNS + 5))
        (scratch.work / "bench_tools.py").write_text(TOOL_MODULE)
        (scratch.work / "script.json").write_bytes(msgspec.json.encode(script()))
        port = free_port()
        async with server("api", argv, env, port, scratch.work):
            base_url = f"http://127.0.0.1:{port}"
            await sse_latencies(base_url, 1)  # warm-up
            sse: list[Sample] = []
            raw: list[float] = []
            for _ in range(runs):  # alternate, so both see the same load
                sse.extend(await sse_latencies(base_url, 1))
                raw.extend(await raw_latencies(redis_url, 2 * TURNS))
        alone = await path_alone(redis_url, runs * 2 * TURNS)
    print(f"Python {sys.version.split()[0]}; {runs} runs of {2 * TURNS + 1} steps, a step every ~{PAUSE_S * 1e3:g} ms")
    print(f"{'path':34}{'samples':>9}{'p50':>10}{'p99':>10}{'max':>10}")
    rows = (
        ("step recorded -> SSE at client", [sample.total for sample in sse]),
        ("  recorded -> in the stream", [sample.to_stream for sample in sse]),
        ("  in the stream -> at client", [sample.from_stream for sample in sse]),
        ("raw XADD -> XREAD BLOCK", raw),
        ("the path alone: append -> client", alone),
    )
    for name, samples in rows:
        figures = percentiles(samples)
        print(f"{name:32}{figures['n']:9d}{figures['p50']:8.2f}ms{figures['p99']:8.2f}ms{figures['max']:8.2f}ms")
    totals, raws = percentiles([sample.total for sample in sse]), percentiles(raw)
    print(f"SSE / raw: p50 {totals['p50'] / raws['p50']:.1f}x, p99 {totals['p99'] / raws['p99']:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer runs, for a smoke test")
    asyncio.run(main(parser.parse_args().quick))
