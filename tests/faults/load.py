"""Load through the real app, and the counts a fault test asserts on.

Clients post runs back to back (every fourth in a session, so Redis is used by runs as well as by
the rate limiter), read each accepted run back and, now and then, its trace; readers keep reading
runs accepted earlier (so reads go on while posts are refused); a poller calls /health.
Every answer is kept with when it was sent and how long it took. After the servers are back, the
runs themselves are read from PostgreSQL: what ended how, what is stuck, which trace is short.
"""

import asyncio
import contextlib
import itertools
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg  # type: ignore[import-untyped]
import httpx

from tests.faults.app import API_KEY, STEPS_PER_RUN

UNFINISHED = ("pending", "running")


@dataclass(frozen=True)
class Answer:
    """One request and what came back (status None: no answer at all)."""

    kind: str  # post, get, trace, health
    sent_at: float  # time.monotonic()
    latency_s: float
    status: int | None
    retry_after: str | None = None
    run_id: str | None = None
    run_status: str | None = None
    error: str | None = None
    code: str | None = None  # a problem's `code` (store_unavailable, overloaded, ...)


@dataclass
class Load:
    """`clients` clients and a /health poller against the app at `url`, until `stop` is set."""

    url: str
    clients: int = 24
    readers: int = 2
    answers: list[Answer] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    _counter: Iterator[int] = field(default_factory=itertools.count)

    async def run(self) -> None:
        """Post, read and poll until `stop` is set."""
        limits = httpx.Limits(max_connections=self.clients + 4, max_keepalive_connections=self.clients + 4)
        headers = {"X-API-Key": API_KEY}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, limits=limits, timeout=60.0) as http:
            await asyncio.gather(
                self._health(http),
                *(self._reader(http, n) for n in range(self.readers)),
                *(self._client(http) for _ in range(self.clients)),
            )

    async def _client(self, http: httpx.AsyncClient) -> None:
        while not self.stop.is_set():
            n = next(self._counter)
            body: dict[str, str] = {"goal": f"run {n}"}
            if n % 4 == 0:
                body["session_id"] = f"session-{n % 16}"
            posted = await self._send(http, "post", "POST", "/v1/runs", json=body)
            if posted.run_id is None:
                await asyncio.sleep(0.2)  # refused: an impatient client, back soon (load goes on during the outage)
                continue
            await self._send(http, "get", "GET", f"/v1/runs/{posted.run_id}")
            if n % 5 == 0:
                await self._send(http, "trace", "GET", f"/v1/runs/{posted.run_id}/trace")

    async def _reader(self, http: httpx.AsyncClient, n: int) -> None:
        for turn in itertools.count(n):
            if self.stop.is_set():
                return
            if self.accepted:
                run_id = self.accepted[-1 - turn % min(len(self.accepted), 50)]
                await self._send(http, "get", "GET", f"/v1/runs/{run_id}")
                if turn % 2:
                    await self._send(http, "trace", "GET", f"/v1/runs/{run_id}/trace")
            await asyncio.sleep(0.1)

    async def _health(self, http: httpx.AsyncClient) -> None:
        while not self.stop.is_set():
            await self._send(http, "health", "GET", "/health")
            await asyncio.sleep(0.25)

    async def _send(self, http: httpx.AsyncClient, kind: str, method: str, path: str, **kwargs: object) -> Answer:
        sent = time.monotonic()
        try:
            response = await http.request(method, path, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            answer = Answer(kind, sent, time.monotonic() - sent, None, error=type(exc).__name__)
        else:
            run_id = run_status = code = None
            if kind == "post" and response.status_code in (201, 202):
                body = response.json()
                run_id, run_status = body["id"], body["status"]
                self.accepted.append(run_id)
            elif response.headers.get("content-type") == "application/problem+json":
                code = response.json().get("code")
            answer = Answer(
                kind,
                sent,
                time.monotonic() - sent,
                response.status_code,
                retry_after=response.headers.get("retry-after"),
                run_id=run_id,
                run_status=run_status,
                code=code,
            )
        self.answers.append(answer)
        return answer

    def sent_between(self, start: float, end: float, kind: str | None = None) -> list[Answer]:
        """The answers to requests sent in [start, end)."""
        return [a for a in self.answers if start <= a.sent_at < end and (kind is None or a.kind == kind)]


@dataclass(frozen=True)
class RunRow:
    """A run as PostgreSQL holds it, with how many distinct steps and how many step rows it has."""

    id: str
    status: str
    failure_reason: str | None
    steps: int
    step_rows: int
    started_at: datetime | None
    finished_at: datetime | None


async def read_runs(dsn: str) -> list[RunRow]:
    """Every run in the database."""
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch(
            "SELECT r.id::text AS id, r.status, r.failure_reason, r.started_at, r.finished_at,"
            " (SELECT count(DISTINCT s.step_no) FROM steps s WHERE s.run_id = r.id) AS steps,"
            " (SELECT count(*) FROM steps s WHERE s.run_id = r.id) AS step_rows"
            " FROM runs r"
        )
    finally:
        await conn.close()
    return [
        RunRow(r["id"], r["status"], r["failure_reason"], r["steps"], r["step_rows"], r["started_at"], r["finished_at"])
        for r in rows
    ]


async def settled_runs(dsn: str, *, timeout_s: float = 90.0) -> list[RunRow]:
    """The runs once none is pending or running (or as they are after `timeout_s`: the stuck ones show)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(OSError, asyncpg.PostgresError):
            rows = await read_runs(dsn)
            if not any(row.status in UNFINISHED for row in rows) or time.monotonic() > deadline:
                return rows
        if time.monotonic() > deadline:
            raise RuntimeError("the database did not answer after the outage")
        await asyncio.sleep(0.5)


@dataclass(frozen=True)
class Tally:
    """What a fault test counts."""

    answers: Counter[str]  # "post 201", "get 503", "health 200"...
    server_errors: int  # 500s and any 5xx but 503: must be 0
    refusals: int  # 503 answers to API calls (not /health)
    refusals_without_retry_after: int  # must be 0
    no_answer: int  # transport errors and timeouts: must be 0
    runs: int
    succeeded: int
    # Ended without having done any work (no step): a store was down when it was to start, or its
    # creation was committed while its client was told 503 (an INSERT that landed as PostgreSQL froze),
    # so nobody ran it and the sweeper ended it. Nothing finished is lost; reported, allowed.
    unstarted: Counter[str]
    lost: list[RunRow]  # did work and did not succeed: must be empty
    stuck: list[RunRow]  # still pending or running after recovery: must be empty
    short_traces: list[RunRow]  # succeeded without all their steps (or with a step twice): must be empty
    told_succeeded_but_not: int  # a 201 said succeeded, the database says otherwise: must be 0

    def line(self) -> str:
        """One line for the log and docs/benchmarks.md."""
        return (
            f"requests {sum(self.answers.values())}, 500s/other 5xx {self.server_errors}, 503 refusals "
            f"{self.refusals} (without Retry-After {self.refusals_without_retry_after}), no answer {self.no_answer}; "
            f"runs {self.runs}: succeeded {self.succeeded}, lost {len(self.lost)}, stuck {len(self.stuck)}, "
            f"short traces {len(self.short_traces)}, ended before any work {sum(self.unstarted.values())} "
            f"{dict(self.unstarted) or ''}"
        )


def tally(load: Load, rows: list[RunRow]) -> Tally:
    """Count the answers and the runs."""
    answers = Counter(f"{a.kind} {a.status}" for a in load.answers)
    api = [a for a in load.answers if a.kind != "health"]
    server_errors = sum(1 for a in api if a.status is not None and a.status >= 500 and a.status != 503)
    server_errors += sum(1 for a in load.answers if a.kind == "health" and a.status not in (None, 200, 503))
    refusals = [a for a in api if a.status == 503]
    by_id = {row.id: row for row in rows}
    told = [a for a in api if a.kind == "post" and a.run_status == "succeeded"]
    lost, stuck, short = [], [], []
    unstarted: Counter[str] = Counter()
    for row in rows:
        if row.status in UNFINISHED:
            stuck.append(row)
        elif row.status == "succeeded":
            if row.steps != STEPS_PER_RUN or row.step_rows != STEPS_PER_RUN:
                short.append(row)
        elif row.steps == 0:
            unstarted[f"{row.status}: {row.failure_reason}"] += 1
        else:
            lost.append(row)
    return Tally(
        answers=answers,
        server_errors=server_errors,
        refusals=len(refusals),
        refusals_without_retry_after=sum(1 for a in refusals if not a.retry_after),
        no_answer=sum(1 for a in load.answers if a.status is None),
        runs=len(rows),
        succeeded=sum(1 for row in rows if row.status == "succeeded"),
        unstarted=unstarted,
        lost=lost,
        stuck=stuck,
        short_traces=short,
        told_succeeded_but_not=sum(
            1 for a in told if getattr(by_id.get(a.run_id or ""), "status", None) != "succeeded"
        ),
    )
