"""Load for the HTTP benchmarks: back-to-back clients, and requests paced at a fixed rate.

- `closed_loop`: clients posting back to back; what completes inside the window.
- `open_loop`: requests due at a fixed rate whatever the answers do, each timed from the moment it
  was due (so a server that falls behind shows it), by outcome.
- Through httpx (`HttpxLoad`) or a raw HTTP/1.1 client that costs far less CPU (`RawLoad`).
"""

import asyncio
import contextlib
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import httpx
import msgspec

from http_harness import BODY, KEEPALIVE_S, SUCCEEDED, Target, Usage, usage
from raw_http import RawLoadClient


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
