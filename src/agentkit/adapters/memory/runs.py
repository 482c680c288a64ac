"""An in-memory RunRepository, bounded: past `max_finished` ended runs, the oldest are forgotten."""

from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from agentkit.application.errors import IdempotencyConflict, StaleAttempt
from agentkit.application.ports.run_repository import LapsedCursor, RunRepository, cursor_of
from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus, claim, claimable, expire

_EXECUTABLE = (RunStatus.PENDING, RunStatus.RUNNING)
_PAUSED = (RunStatus.REQUIRES_ACTION, RunStatus.WAITING)


class InMemoryRunRepository(RunRepository):
    """Runs in a dict; the same rules as the Postgres repository (fencing, idempotency keys).

    Bounded: a process that keeps its state in memory must not grow with every run it ever served.
    At most `max_finished` runs in a terminal status are kept (None: all); when a run ends, the runs
    that ended longest ago beyond that are forgotten, and whoever keeps data per run (the trace, the
    event log) is told (`on_forget`). Runs that have not ended are never forgotten.
    """

    def __init__(self, *, max_finished: int | None = None) -> None:
        self._runs: dict[RunId, Run] = {}
        self._by_key: dict[tuple[OwnerId, str], RunId] = {}
        self._max_finished = max_finished
        self._finished: OrderedDict[RunId, None] = OrderedDict()  # ended runs, in the order they ended
        self._forgetters: list[Callable[[RunId], None]] = []

    def on_forget(self, forget: Callable[[RunId], None]) -> None:
        """Call `forget(run_id)` for every run this repository forgets (the trace's and logs' data of it go too)."""
        self._forgetters.append(forget)

    def ended(self) -> list[Run]:
        """The ended runs kept, the latest to end first."""
        return [self._runs[run_id] for run_id in reversed(self._finished)]

    def forget(self, run_id: RunId) -> None:
        """Drop a run and tell the listeners (an ended run a caller is done with, say)."""
        run = self._runs.pop(run_id, None)
        self._finished.pop(run_id, None)
        if run is not None and run.idempotency_key is not None:
            self._by_key.pop((run.owner, run.idempotency_key), None)
        for forget in self._forgetters:
            forget(run_id)

    def _keep(self, run: Run) -> None:
        self._runs[run.id] = run
        if run.status.is_terminal and run.id not in self._finished:
            self._finished[run.id] = None
            self._make_room()

    def _make_room(self) -> None:
        bound = self._max_finished
        if bound is None:
            return
        finished = self._finished
        while len(finished) > bound:
            oldest = next(iter(finished))
            self.forget(oldest)

    async def add(self, run: Run) -> None:
        """Store a new run."""
        if run.idempotency_key is not None:
            key = (run.owner, run.idempotency_key)
            if key in self._by_key:
                raise IdempotencyConflict(f"idempotency key {run.idempotency_key!r} is already in use")
            self._by_key[key] = run.id
        self._keep(run)

    async def get(self, run_id: RunId) -> Run | None:
        """The run, or None."""
        return self._runs.get(run_id)

    def all_runs(self) -> list[Run]:
        """Every stored run (the in-memory listing reads them)."""
        return list(self._runs.values())

    async def get_by_idempotency_key(self, owner: OwnerId, key: str) -> Run | None:
        """The owner's run created with this key, or None."""
        run_id = self._by_key.get((owner, key))
        return None if run_id is None else self._runs.get(run_id)

    async def save(self, run: Run) -> None:
        """Replace the stored run, refusing writes from a stale attempt."""
        stored = self._runs.get(run.id)
        if stored is not None and stored.attempt > run.attempt:
            raise StaleAttempt(f"run {run.id} is owned by attempt {stored.attempt}, not {run.attempt}")
        if stored is not None and stored.is_terminal and stored.status is not run.status:
            raise StaleAttempt(f"run {run.id} already ended with status {stored.status.value!r}")
        if stored is not None and stored.cancel_requested and not run.cancel_requested:
            run = msgspec.structs.replace(run, cancel_requested=True)
        self._keep(run)

    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """Take the run under a new attempt, if it is unfinished under `attempt`."""
        stored = self._runs.get(run_id)
        if stored is None or stored.attempt != attempt or not claimable(stored, now=now):
            return None
        taken = claim(stored, now=now, lease_until=until)
        self._runs[run_id] = taken
        return taken

    async def request_cancel(self, run_id: RunId) -> None:
        """Set the cancel flag of a running run."""
        stored = self._runs.get(run_id)
        if stored is not None and stored.status is RunStatus.RUNNING:
            self._runs[run_id] = msgspec.structs.replace(stored, cancel_requested=True)

    async def children(self, run_id: RunId) -> list[Run]:
        """The run's children, oldest first."""
        found = [run for run in self._runs.values() if run.parent_run_id == run_id]
        found.sort(key=lambda run: (run.created_at, run.id))
        return found

    async def lapsed(self, now: datetime, *, limit: int = 100, after: LapsedCursor | None = None) -> list[Run]:
        """Unfinished runs whose lease expired, longest-lapsed first, past `after`."""
        found = sorted(
            (
                run
                for run in self._runs.values()
                if run.status in _EXECUTABLE and run.expires_at is not None and run.expires_at < now
            ),
            key=cursor_of,
        )
        if after is not None:
            found = [run for run in found if cursor_of(run) > after]
        return found[:limit]

    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Extend the leases of the runs that are still unfinished; say which of them are to cancel."""
        cancelled: set[RunId] = set()
        for run_id in run_ids:
            stored = self._runs.get(run_id)
            if stored is not None and stored.status in _EXECUTABLE:
                self._runs[run_id] = msgspec.structs.replace(stored, heartbeat_at=now, expires_at=until)
                if stored.cancel_requested:
                    cancelled.add(run_id)
        return cancelled

    async def expire_lapsed(self, now: datetime, *, reason: str, limit: int = 100, min_attempt: int = 0) -> list[Run]:
        """Expire the unfinished runs whose lease lapsed, taken at least `min_attempt` times."""
        lapsed = [run for run in await self.lapsed(now, limit=len(self._runs)) if run.lost_attempts >= min_attempt]
        expired = [expire(run, now=now, reason=reason) for run in lapsed[:limit]]
        for run in expired:
            self._keep(run)
        return expired

    async def save_answer(self, run: Run, *, expected: RequiredAction) -> bool:
        """Store the answered action if the stored run still waits with `expected`."""
        stored = self._runs.get(run.id)
        if stored is None or stored.status not in _PAUSED or stored.attempt != run.attempt or stored.action != expected:
            return False
        self._runs[run.id] = msgspec.structs.replace(
            stored,
            status=run.status,
            action=run.action,
            expires_at=run.expires_at,
            children_input_tokens=run.children_input_tokens,
            children_output_tokens=run.children_output_tokens,
            children_cost_usd=run.children_cost_usd,
            children_turns=run.children_turns,
        )
        return True

    async def stalled_waits(self, now: datetime, *, limit: int = 100) -> list[Run]:
        """Waiting runs whose expiry passed, oldest expiry first."""
        found = sorted(
            (
                run
                for run in self._runs.values()
                if run.status is RunStatus.WAITING and run.expires_at is not None and run.expires_at < now
            ),
            key=cursor_of,
        )
        return found[:limit]

    async def expire_unanswered(self, now: datetime, *, reason: str, limit: int = 100) -> list[Run]:
        """End `expired` the paused runs whose action's deadline passed."""
        waiting = sorted(
            (
                run
                for run in self._runs.values()
                if run.status is RunStatus.REQUIRES_ACTION and run.expires_at is not None and run.expires_at < now
            ),
            key=cursor_of,
        )
        expired = [expire(run, now=now, reason=reason) for run in waiting[:limit]]
        for run in expired:
            self._keep(run)
        return expired

    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Delete terminal runs that finished before the cutoff."""
        doomed = [run for run in self._runs.values() if run.finished_at is not None and run.finished_at < cutoff]
        for run in doomed:
            self.forget(run.id)
        return len(doomed)
