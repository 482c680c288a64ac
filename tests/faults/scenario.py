"""One fault under load: warm up, break a server, mend it, let the app recover, count."""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from tests.faults.app import AppServer
from tests.faults.load import Answer, Load, RunRow, Tally, settled_runs, tally

_log = structlog.get_logger(__name__)
WARMUP_S = 3.0
AFTER_S = 4.0  # load after the app recovered: every run then must be accepted
RECOVERY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Outcome:
    """What happened: the load, the counts, and when the fault began, ended and the app recovered."""

    load: Load
    tally: Tally
    rows: list[RunRow]
    fault_start: float
    fault_end: float
    recovered_at: float
    fault_wall: tuple[datetime, datetime]  # the fault's start and end by the wall clock (the database's times)

    @property
    def caught(self) -> list[RunRow]:
        """Runs in flight when the fault began (started before, reached their end after): caught mid-work."""
        start = self.fault_wall[0]
        return [r for r in self.rows if r.started_at and r.finished_at and r.started_at < start < r.finished_at]

    def waits_during_fault(self, kind: str) -> list[float]:
        """How long each request of this kind (post, get, trace, health) waited while the fault lasted.

        Counted from when it was sent or the fault began, whichever is later, so a request already in
        flight when the server froze counts with the time the freeze cost it.
        """
        waits = []
        for a in self.load.answers:
            answered = a.sent_at + a.latency_s
            if a.kind == kind and a.sent_at < self.fault_end and answered > self.fault_start:
                waits.append(answered - max(a.sent_at, self.fault_start))
        return waits

    def after_recovery(self, kind: str) -> list[Answer]:
        """Answers to requests sent a second or more after the app recovered."""
        return self.load.sent_between(self.recovered_at + 1.0, float("inf"), kind)


async def under_load(
    app: AppServer, dsn: str, fault: Callable[[], Awaitable[None]], mend: Callable[[], Awaitable[None]], hold_s: float
) -> Outcome:
    """Run load; `fault()`, wait `hold_s`, `mend()`; wait for the first accepted run; load a while more; count."""
    load = Load(app.url)
    running = asyncio.create_task(load.run())
    try:
        await asyncio.sleep(WARMUP_S)
        fault_start, wall_start = time.monotonic(), datetime.now(UTC)
        await fault()
        await asyncio.sleep(hold_s)
        await mend()
        fault_end, wall_end = time.monotonic(), datetime.now(UTC)
        recovered_at = await _first_accepted_after(load, fault_end)
        await asyncio.sleep(AFTER_S)
    finally:
        load.stop.set()
        await asyncio.wait_for(running, 120)
    rows = await settled_runs(dsn)
    outcome = Outcome(load, tally(load, rows), rows, fault_start, fault_end, recovered_at, (wall_start, wall_end))
    _log.info(
        "fault_outcome",
        summary=outcome.tally.line(),
        longest_waits_s={
            kind: round(max(outcome.waits_during_fault(kind), default=0.0), 2)
            for kind in ("post", "get", "trace", "health")
        },
        caught_mid_work=len(outcome.caught),
        recovered_after_s=round(recovered_at - fault_end, 2),
    )
    return outcome


async def _first_accepted_after(load: Load, since: float) -> float:
    deadline = time.monotonic() + RECOVERY_TIMEOUT_S
    while time.monotonic() < deadline:
        accepted = [a.sent_at for a in load.sent_between(since, float("inf"), "post") if a.status in (201, 202)]
        if accepted:
            return min(accepted)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no run was accepted within {RECOVERY_TIMEOUT_S:g} s of the server coming back")
