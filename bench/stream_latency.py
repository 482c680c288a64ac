"""Streaming latency: the first fragment at an SSE client minus the first chunk out of a fake provider.

Three ways a run can execute, each run after run (one at a time) with a client on POST /v1/runs
`"stream": true` (the run's SSE from its start):

1. In process, state in memory: the app (inline executor) and uvicorn in this process; the model is an
   `LLMClient` here that notes the time as it yields its first fragment.
2. In process, PostgreSQL and Redis: the same, the events through the Redis log.
3. Through a queue worker: `agentkit serve` (RUN_MODE=queue) and `agentkit worker`, subprocesses on
   PostgreSQL and Redis; the worker's model is the OpenAI adapter on an OpenAI-compatible server in
   this process, which notes the time as its first content chunk leaves (written and drained). The
   chunk then crosses the worker (the SDK parses it, the step pipeline logs it in Redis) and the
   API process (which reads the log and writes the SSE).

The latency is the client's time of the first `delta` event (the whole event read) minus the
provider's time (one clock: the same process's `time.perf_counter`). Beside them, in the same
run, the floors: one SSE event through uvicorn and httpx on loopback (a bare ASGI app that writes
it when told), a raw Redis XADD -> XREAD BLOCK between two clients, and, in each queued run while
its model thinks, a raw XADD relayed by two processes (`Relays`: the queue path's shape).

Then 100 clients, started 10 ms apart, each creating and following a streaming run through the
queue worker (WORKER_CONCURRENCY=100; 40 numbered pieces an answer, 100 ms apart, then 20 ms apart).
Per run: the pieces its fragments held must be 0, 1, 2, ... each once (a lost or repeated piece
shows); fragments the log dropped once their step was stored (a client that fell behind) come with
the step, whose text must be the whole answer. Each piece's latency, out of the provider to its
client, and the CPU each process spent.

Needs DATABASE_URL and REDIS_URL. Run: `.venv/bin/python bench/stream_latency.py [--quick]`.
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import secrets
import signal
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from dishka import Provider, Scope
from dishka.integrations.litestar import LitestarProvider
from redis.asyncio import Redis

from agentkit.adapters.postgres import parse_database_url
from agentkit.adapters.redis import create_redis
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, Usage
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.wiring import make_container, started_state
from agentkit.entrypoints.wiring.serving import http_app
from agentkit.entrypoints.wiring.settings import load_settings
from http_harness import (
    API_KEY,
    KEEPALIVE_S,
    PYTHON,
    Scratch,
    agentkit_command,
    free_port,
    scratch_state,
    server,
    usage,
)

PIECES, GAP_S = 10, 0.002  # each latency run's answer: ten pieces, 2 ms apart (a fast model)
# before its first piece the model thinks (a real one for hundreds of ms): the client's stream is open by then
FIRST_TOKEN_S = 0.05
LOAD_RUNS, LOAD_PIECES = 100, 40
LOAD_GAPS_S = (0.1, 0.02)  # 10 pieces a second each (a slow model), and 50 (as a fast one writes)
LOAD_STAGGER_S = 0.01  # the 100 clients start within a second
WAIT_S = 120.0


def percentiles(samples: Sequence[float]) -> str:
    """p50, p99 and max in milliseconds, as a table's cells."""
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return f"{len(ordered):8d}{cuts[49] * 1e3:9.2f}{cuts[98] * 1e3:9.2f}{ordered[-1] * 1e3:9.2f}"


def answer_pieces(count: int) -> list[str]:
    """The answer's pieces, numbered: a lost or repeated one shows in the joined text."""
    return [f"p{n} " for n in range(count)]


async def staggered(client: httpx.AsyncClient, goal: str, index: int) -> "Followed":
    """The index-th client starts LOAD_STAGGER_S after the one before (clients come and go, not all in one tick)."""
    await asyncio.sleep(index * LOAD_STAGGER_S)
    return await stream_run(client, goal)


class Split:
    """First chunk out -> first fragment at the client, and its two halves at the Redis stream (ms resolution)."""

    def __init__(self) -> None:
        self.total: list[float] = []
        self.to_stream: list[float] = []
        self.from_stream: list[float] = []
        self.by_step = 0  # runs whose first text came with the step (their fragments were not sent)


class TimedModel(LLMClient):
    """Streams a numbered answer; `first_out` holds, per call, the time its first fragment was yielded."""

    def __init__(self) -> None:
        self.first_out: list[float] = []
        self.first_wall: list[float] = []
        self._pieces = answer_pieces(PIECES)
        self._response = LLMResponse(text="".join(self._pieces), usage=Usage(input_tokens=10, output_tokens=PIECES))

    @property
    def provider(self) -> str:
        """The bench's own."""
        return "bench"

    @property
    def model(self) -> str:
        """The bench's own."""
        return "timed"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The whole answer (unused: the runs stream)."""
        return self._response

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """The answer a piece at a time, GAP_S apart, then whole."""
        await asyncio.sleep(FIRST_TOKEN_S)
        for number, piece in enumerate(self._pieces):
            if number == 0:
                self.first_out.append(time.perf_counter())
                self.first_wall.append(time.time())
            yield TextDelta(text=piece)
            await asyncio.sleep(GAP_S)
        yield self._response


class _Model(Provider):
    def __init__(self, llm: LLMClient) -> None:
        super().__init__()
        self.provide(lambda: llm, provides=LLMClient, scope=Scope.APP)


@contextlib.asynccontextmanager
async def uvicorn_on(app: Any) -> AsyncIterator[str]:
    """The ASGI app under uvicorn on a loopback port of its own (lifespan on); yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on", timeout_graceful_shutdown=2))
    serving = asyncio.create_task(uv.serve(sockets=[sock]))
    while not uv.started:
        if serving.done():
            await serving
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        await serving
        sock.close()


class Followed:
    """What a client read of one streamed run: when the first fragment arrived, the fragments, the ids, the end."""

    def __init__(self) -> None:
        self.first_at: float | None = None
        self.first_wall: float = 0.0  # the same moment on the wall clock
        self.first_id_ms = 0  # the first fragment's event id: when Redis took it (ms, Redis's clock)
        # the step came first: its fragments went in the log's batch with it, so none was sent
        self.first_by_step = False
        self.fragments: list[str] = []
        self.arrived: list[float] = []  # when each fragment was read
        self.arrived_wall: list[float] = []
        self.logged_ms: list[int] = []  # when Redis took each fragment (its id's time)
        self.ids: list[tuple[int, int]] = []
        self.run: dict[str, Any] = {}
        self.step_text: str | None = None


async def stream_run(client: httpx.AsyncClient, goal: str) -> Followed:
    """POST /v1/runs with `"stream": true` and read its SSE to the end."""
    seen = Followed()
    async with client.stream("POST", "/v1/runs", json={"goal": goal, "stream": True}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"{response.status_code}: {(await response.aread())[:300]!r}")
        kind, data, event_id = None, "", ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and kind is not None:
                ms, _, seq = event_id.partition("-")
                if kind in ("delta", "step") and seen.first_at is None:  # the first text the client has
                    seen.first_at, seen.first_wall, seen.first_id_ms = time.perf_counter(), time.time(), int(ms)
                    seen.first_by_step = kind == "step"
                seen.ids.append((int(ms), int(seq)))
                event = json.loads(data)
                if kind == "delta" and event["kind"] == "text":
                    seen.fragments.append(event["text"])
                    seen.arrived.append(time.perf_counter())
                    seen.arrived_wall.append(time.time())
                    seen.logged_ms.append(int(ms))
                elif kind == "step":
                    seen.step_text = event.get("text")
                elif kind == "status":
                    seen.run = event
                kind, data = None, ""
    return seen


async def in_process(env: dict[str, str], runs: int) -> Split:
    """Run after run on the app in this process (inline executor): first fragment at the client - first out."""
    base = {"API_KEYS": API_KEY, "LOG_LEVEL": "WARNING", "RUN_MODE": "inline", "RATE_LIMIT_PER_MIN": "100000000"}
    settings = load_settings({**env, **base})
    model = TimedModel()
    samples = Split()
    async with started_state(settings) as endpoints:
        container = make_container(settings, LitestarProvider(), _Model(model), endpoints=endpoints)
        async with (
            uvicorn_on(http_app(container, settings)) as url,
            httpx.AsyncClient(
                base_url=url,
                headers={"X-API-Key": API_KEY},
                timeout=WAIT_S,
                limits=httpx.Limits(keepalive_expiry=KEEPALIVE_S),
            ) as client,
        ):
            for index in range(runs + 5):
                seen = await stream_run(client, f"run {index}")
                assert seen.first_at is not None, seen.run
                assert seen.run.get("status") == "succeeded", seen.run
                if index >= 5:  # the first few warm the caches up
                    samples.total.append(seen.first_at - model.first_out[-1])
                    samples.by_step += seen.first_by_step
                    samples.to_stream.append(seen.first_id_ms / 1e3 - model.first_wall[-1])
                    samples.from_stream.append(seen.first_wall - seen.first_id_ms / 1e3)
    return samples


class OpenAIStreamServer:
    """A minimal OpenAI-compatible `/v1/chat/completions` on loopback that streams numbered pieces.

    `first_out[goal]` is when the first content chunk of the run with that goal left (written and drained).
    """

    def __init__(self) -> None:
        self.first_out: dict[str, float] = {}
        self.first_wall: dict[str, float] = {}
        self.out: dict[str, list[float]] = {}  # every piece's time out, per goal
        self.thinking = asyncio.Event()  # set when a request came and its first piece is FIRST_TOKEN_S away
        self.out_wall: dict[str, list[float]] = {}
        self.pieces, self.gap_s = PIECES, GAP_S
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> "OpenAIStreamServer":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            body = json.loads(await reader.readexactly(length))
            goal = next(m["content"] for m in body["messages"] if m["role"] == "user")
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
            self.thinking.set()  # the bench samples the relayed floor now, as the run's path stands
            await asyncio.sleep(FIRST_TOKEN_S)
            writer.write(self._chunk({"role": "assistant", "content": ""}))
            pieces = answer_pieces(self.pieces)
            for number, piece in enumerate(pieces):
                writer.write(self._chunk({"content": piece}))
                await writer.drain()
                self.out.setdefault(goal, []).append(time.perf_counter())
                self.out_wall.setdefault(goal, []).append(time.time())
                if number == 0:
                    self.first_out[goal], self.first_wall[goal] = time.perf_counter(), time.time()
                await asyncio.sleep(self.gap_s)
            writer.write(self._chunk({}, finish="stop"))
            usage = {"prompt_tokens": 10, "completion_tokens": len(pieces), "total_tokens": 10 + len(pieces)}
            writer.write(self._chunk({}, usage=usage))
            writer.write(b"data: [DONE]\n\n")
            await writer.drain()
        finally:
            writer.close()

    @staticmethod
    def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        choices = [] if usage is not None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench"}
        return b"data: " + json.dumps({**body, "choices": choices, "usage": usage}).encode() + b"\n\n"


@contextlib.asynccontextmanager
async def worker_process(env: dict[str, str], logs: Path) -> AsyncIterator[int]:
    """`agentkit worker` on the bench's state; SIGINT (graceful) at the end."""
    with (logs / "worker.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(PYTHON, "-m", "agentkit", "worker", env=env, stdout=log, stderr=log)
        try:
            yield proc.pid
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(proc.wait(), 30)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


class LoadResult:
    """The clients' runs, checked one by one: the pieces their fragments held, in order, each once."""

    def __init__(
        self, followed: list[Followed], provider: OpenAIStreamServer, goals: list[str], gap_s: float, cpu: str
    ) -> None:
        self.gap_s, self.cpu = gap_s, cpu
        expected = "".join(answer_pieces(LOAD_PIECES))
        self.runs = len(followed)
        self.succeeded = sum(seen.run.get("status") == "succeeded" and seen.step_text == expected for seen in followed)
        self.whole = self.tail_in_step = self.lost = self.repeated = self.ids_grow = 0
        self.pieces = Split()  # every piece: out of the provider -> in a fragment at the client
        for seen, goal in zip(followed, goals, strict=True):
            numbers = [int(piece[1:]) for text in seen.fragments for piece in text.split()]
            self.repeated += len(numbers) != len(set(numbers))
            self.lost += numbers != sorted(set(numbers)) or numbers != list(range(len(numbers)))
            self.whole += "".join(seen.fragments) == expected
            # the rest came with the step: fragments of a step logged in the same batch are not sent
            self.tail_in_step += len(numbers) < LOAD_PIECES and expected.startswith("".join(seen.fragments))
            self.ids_grow += all(a < b for a, b in itertools.pairwise(seen.ids))
            out, out_wall = provider.out.get(goal, []), provider.out_wall.get(goal, [])
            fragments = zip(seen.fragments, seen.arrived, seen.arrived_wall, seen.logged_ms, strict=True)
            for text, at, at_wall, logged_ms in fragments:
                for piece in text.split():
                    number = int(piece[1:])
                    if number < len(out):
                        self.pieces.total.append(at - out[number])
                        self.pieces.to_stream.append(logged_ms / 1e3 - out_wall[number])
                        self.pieces.from_stream.append(at_wall - logged_ms / 1e3)


async def through_worker(scratch: Scratch, runs: int, load_runs: int) -> tuple[Split, list[float], list[LoadResult]]:
    """Run after run through `agentkit serve` (queue mode) and one `agentkit worker`, each followed by a
    sample of the relayed floor; then the clients at once."""
    async with OpenAIStreamServer() as provider:
        settings = {
            "run_mode": "queue",
            "worker_concurrency": str(LOAD_RUNS),
            "run_queue_name": f"{scratch.prefix}runs",
            "llm_provider": "openai",
            "llm_base_url": provider.url,
            "llm_model": "bench",
            "openai_api_key": "sk-bench-" + "0" * 20,
        }
        argv, env = agentkit_command(scratch, **settings)
        port = free_port()
        async with (
            worker_process(env, scratch.work) as worker_pid,
            server("api", argv, env, port, scratch.work) as api_pid,
            Relays(scratch.redis_url) as relays,
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                headers={"X-API-Key": API_KEY},
                timeout=WAIT_S,
                # idle connections closed before uvicorn's 5 s keep-alive ends (a reused one it closed is a ReadError)
                limits=httpx.Limits(max_connections=load_runs + 10, keepalive_expiry=KEEPALIVE_S),
            ) as client,
        ):
            samples, relayed = Split(), []
            for index in range(runs + 5):
                goal = f"run {index}"
                provider.thinking.clear()
                running = asyncio.create_task(stream_run(client, goal))
                thinking = asyncio.create_task(provider.thinking.wait())
                await asyncio.wait({running, thinking}, return_when=asyncio.FIRST_COMPLETED)
                floor = await relays.sample() if thinking.done() else None  # while the model thinks
                thinking.cancel()
                try:
                    seen = await running
                except RuntimeError:
                    for name in ("api", "worker"):
                        print(f"--- {name}.log\n" + (scratch.work / f"{name}.log").read_text()[-3000:])
                    raise
                assert seen.first_at is not None, seen.run
                assert seen.run.get("status") == "succeeded", seen.run
                if index >= 5:
                    samples.total.append(seen.first_at - provider.first_out[goal])
                    samples.by_step += seen.first_by_step
                    samples.to_stream.append(seen.first_id_ms / 1e3 - provider.first_wall[goal])
                    samples.from_stream.append(seen.first_wall - seen.first_id_ms / 1e3)
                    if floor is not None:
                        relayed.append(floor)
            loads = []
            for gap_s in LOAD_GAPS_S:
                provider.pieces, provider.gap_s = LOAD_PIECES, gap_s
                goals = [f"load {gap_s} {index}" for index in range(load_runs)]
                before = (usage(worker_pid).server_s, usage(api_pid).server_s, time.process_time(), time.monotonic())
                followed = await asyncio.gather(*(staggered(client, goal, index) for index, goal in enumerate(goals)))
                worker_s, api_s = usage(worker_pid).server_s - before[0], usage(api_pid).server_s - before[1]
                bench_s, wall_s = time.process_time() - before[2], time.monotonic() - before[3]
                cpu = (
                    f"CPU over {wall_s:.1f} s: worker {worker_s:.1f} s, API {api_s:.1f} s, this process {bench_s:.1f} s"
                )
                loads.append(LoadResult(list(followed), provider, goals, gap_s, cpu))
    return samples, relayed, loads


async def bare_hop(count: int) -> list[float]:
    """One SSE event through uvicorn and httpx on loopback, written the moment the bench says so."""
    told: asyncio.Queue[float] = asyncio.Queue()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for _ in range(count):
            await told.get()
            await send(
                {"type": "http.response.body", "body": b'event: delta\ndata: {"text":"x"}\n\n', "more_body": True}
            )
        await send({"type": "http.response.body", "body": b""})

    samples: list[float] = []
    async with (
        uvicorn_on(app) as url,
        httpx.AsyncClient(base_url=url, timeout=WAIT_S) as client,
        client.stream("GET", "/") as response,
    ):
        lines = response.aiter_lines()
        for _ in range(count):
            sent = time.perf_counter()
            told.put_nowait(sent)
            async for line in lines:
                if line == "":
                    break
            samples.append(time.perf_counter() - sent)
            await asyncio.sleep(GAP_S)
    return samples


async def next_entry(reader: Redis, key: str, last: str) -> Any:
    """The stream's next entry after `last` (XREAD BLOCK)."""
    return await reader.xread({key: last}, count=1, block=10_000)


async def raw_redis(redis_url: str, count: int) -> list[float]:
    """XADD a timestamp; XREAD BLOCK it from another client."""
    writer, reader = create_redis(redis_url), create_redis(redis_url, socket_timeout_s=10)
    key = f"agentkit_bench_stream:{secrets.token_hex(4)}"
    samples: list[float] = []
    try:
        last = "0-0"
        for _ in range(count):
            reading = asyncio.create_task(next_entry(reader, key, last))
            await asyncio.sleep(GAP_S)  # the reader is waiting, as a follower is
            sent = time.perf_counter()
            await writer.xadd(key, {b"t": b"x"}, maxlen=1000, approximate=True)
            reply: Any = await reading
            samples.append(time.perf_counter() - sent)
            last = reply[0][1][-1][0].decode()
    finally:
        await writer.delete(key)
        await writer.aclose()
        await reader.aclose()
    return samples


RELAY = """
import sys, redis
r = redis.Redis.from_url(sys.argv[1])
src, dst, last = sys.argv[2], sys.argv[3], "0-0"
while True:
    for _, entries in r.xread({src: last}, count=100, block=1000) or ():
        for entry_id, fields in entries:
            last = entry_id
            r.xadd(dst, fields, maxlen=1000)
"""


class Relays:
    """The queue path's shape with nothing of AgentKit in it: XADD -> a relay process -> another -> XREAD here.

    Three process wake-ups and three Redis hops, as a fragment's (the worker takes the chunk, the
    API process reads the log, this process reads the SSE). Sampled in each queued run while its
    model thinks (before its first piece), so that both see the same load.
    """

    def __init__(self, redis_url: str) -> None:
        self._url = redis_url
        token = secrets.token_hex(4)
        self._keys = [f"agentkit_bench_relay:{token}:{n}" for n in range(3)]
        self._relays: list[asyncio.subprocess.Process] = []
        self._writer = create_redis(redis_url)
        self._reader = create_redis(redis_url, socket_timeout_s=10)
        self._last = "0-0"

    async def __aenter__(self) -> "Relays":
        for n in range(2):
            relay = await asyncio.create_subprocess_exec(PYTHON, "-c", RELAY, self._url, *self._keys[n : n + 2])
            self._relays.append(relay)
        for _ in range(5):  # the relays' first reads
            await self.sample()
        return self

    async def sample(self) -> float:
        """One entry through both relays: its round trip."""
        reading = asyncio.create_task(next_entry(self._reader, self._keys[2], self._last))
        await asyncio.sleep(GAP_S)  # every reader is waiting, as a follower is
        sent = time.perf_counter()
        await self._writer.xadd(self._keys[0], {b"t": b"x"}, maxlen=1000, approximate=True)
        reply: Any = await reading
        took = time.perf_counter() - sent
        self._last = reply[0][1][-1][0].decode()
        return took

    async def __aexit__(self, *exc: object) -> None:
        for relay in self._relays:
            if relay.returncode is None:
                relay.kill()
            await relay.wait()
        await self._writer.delete(*self._keys)
        await self._writer.aclose()
        await self._reader.aclose()


async def main(quick: bool) -> None:
    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url:
        raise SystemExit("set DATABASE_URL and REDIS_URL")
    runs, load_runs = (30, 20) if quick else (200, LOAD_RUNS)
    load_before = os.getloadavg()[0]
    hop = await bare_hop(runs)
    raw = await raw_redis(redis_url, runs)
    memory = await in_process({"STATE_BACKEND": "memory"}, runs)
    async with scratch_state(parse_database_url(database_url), redis_url) as scratch:
        real_env = {
            "STATE_BACKEND": "external",
            "DATABASE_URL": scratch.dsn,
            "REDIS_URL": redis_url,
            "REDIS_KEY_PREFIX": scratch.prefix,
        }
        real = await in_process(real_env, runs)
        queued, relayed, loads = await through_worker(scratch, runs, load_runs)
    print(
        f"Python {sys.version.split()[0]}; {runs} runs each, one at a time; answers of {PIECES} pieces "
        f"{GAP_S * 1e3:g} ms apart after {FIRST_TOKEN_S * 1e3:g} ms to the first"
    )
    print(
        f"{'first chunk out -> first text at the client':54}{'n':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        f"{'by step':>9}"
    )
    print(f"{'  in process, state in memory':54}{percentiles(memory.total)}{memory.by_step:9d}")
    print(f"{'  in process, PostgreSQL + Redis':54}{percentiles(real.total)}{real.by_step:9d}")
    print(f"{'    out -> in the Redis stream (entry id, ms)':54}{percentiles(real.to_stream)}")
    print(f"{'    in the Redis stream -> at the client':54}{percentiles(real.from_stream)}")
    print(f"{'  through a queue worker (serve + worker processes)':54}{percentiles(queued.total)}{queued.by_step:9d}")
    print(f"{'    out -> in the Redis stream (entry id, ms)':54}{percentiles(queued.to_stream)}")
    print(f"{'    in the Redis stream -> at the client':54}{percentiles(queued.from_stream)}")
    print(f"{'floors: a bare SSE event, uvicorn -> httpx':54}{percentiles(hop)}")
    print(f"{'        raw Redis XADD -> XREAD BLOCK':54}{percentiles(raw)}")
    print(f"{'        raw XADD through two relay processes (*)':54}{percentiles(relayed)}")
    print("(*) sampled in each queued run while its model thinks: the queue path's floor under the same load")
    print("by step: runs whose first text was the step's (its fragments went in the log's batch with it, unsent)")
    print(
        f"aim: p50 <= 5 ms, p99 <= 20 ms; the machine's load average {load_before:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} now"
    )
    for load in loads:
        print(
            f"{load.runs} clients following {load.runs} streaming runs (queue worker, WORKER_CONCURRENCY={LOAD_RUNS}, "
            f"started {LOAD_STAGGER_S * 1e3:g} ms apart; {LOAD_PIECES} pieces {load.gap_s * 1e3:g} ms apart): "
            f"{load.succeeded} succeeded with the whole answer stored; per run, pieces lost: {load.lost} runs, "
            f"repeated: {load.repeated} runs; all pieces as fragments: {load.whole} runs, the last ones with the "
            f"step instead: {load.tail_in_step}; ids only grew: {load.ids_grow} runs; {load.cpu}"
        )
        print(f"{'  each piece: out of the provider -> at its client':54}{percentiles(load.pieces.total)}")
        print(f"{'    out -> in the Redis stream (entry id, ms)':54}{percentiles(load.pieces.to_stream)}")
        print(f"{'    in the Redis stream -> at the client':54}{percentiles(load.pieces.from_stream)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer runs, for a smoke test")
    asyncio.run(main(parser.parse_args().quick))
