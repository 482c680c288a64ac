"""The Postgres RunRepository."""

import functools
from collections.abc import Callable, Coroutine, Sequence
from datetime import datetime
from typing import Any, Concatenate, Final, ParamSpec, TypeVar

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy import bindparam, delete, literal, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import OutageWatch, store_outage
from agentkit.adapters.postgres.driver import driver_connection
from agentkit.adapters.postgres.mapping import is_uuid, row_to_run
from agentkit.adapters.postgres.run_sql import (
    CLAIM_RUN,
    GET_RUN,
    GET_RUN_BY_KEY,
    INSERT_RUN,
    RUN_FENCE,
    SAVE_ANSWER,
    SAVE_RUN,
    answer_arguments,
    run_arguments,
)
from agentkit.adapters.postgres.tables import runs
from agentkit.application.errors import IdempotencyConflict, StaleAttempt, StoreUnavailable
from agentkit.application.ports.run_repository import LapsedCursor, RunRepository
from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus, expire

P = ParamSpec("P")
R = TypeVar("R")
_guarded = store_outage("PostgreSQL")
# runs an executor takes, renews and loses (a paused run has no executor: its expiry is an answer's deadline)
_EXECUTABLE: Final = (RunStatus.PENDING.value, RunStatus.RUNNING.value)
_IDEMPOTENCY_INDEX: Final = "uq_runs_owner_idempotency_key"
_PRUNE_BATCH: Final = 1000
_EXPIRE: Final = (
    update(runs)
    .where(runs.c.id == bindparam("run_id"))
    .values(
        status=bindparam("status"),
        finished_at=bindparam("finished_at"),
        failure_reason=bindparam("failure_reason"),
        final_answer=bindparam("final_answer"),
        expires_at=bindparam("expires_at"),
    )
)


def _expiry_values(run: Run) -> dict[str, Any]:
    return {
        "run_id": run.id,
        "status": run.status.value,
        "finished_at": run.finished_at,
        "failure_reason": run.failure_reason,
        "final_answer": run.answer,
        "expires_at": run.expires_at,
    }


def _postgres(
    method: Callable[Concatenate["SqlaRunRepository", P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate["SqlaRunRepository", P], Coroutine[Any, Any, R]]:
    """PostgreSQL's outages as StoreUnavailable; the repository's OutageWatch hears of each, and of the recovery."""
    guarded = _guarded(method)

    @functools.wraps(method)
    async def watched(self: "SqlaRunRepository", /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            result = await guarded(self, *args, **kwargs)
        except StoreUnavailable:
            self.watch.failed()
            raise
        self.watch.answered()
        return result

    return watched


class SqlaRunRepository(RunRepository):
    """Runs in the `runs` table. Every method is one short transaction of its own.

    A method that sends one statement sends it in autocommit mode: PostgreSQL makes a single
    statement atomic by itself, and the BEGIN and COMMIT round trips would double its cost. The
    statements every run makes (add, get, claim, save: `run_sql`) go to asyncpg directly, on a
    connection of the engine's pool (see `driver`); the others are SQLAlchemy Core.

    Every method raises StoreUnavailable when PostgreSQL cannot serve (see `agentkit.adapters.outage`),
    and tells `watch` what it saw: a lease that lapsed while the database was unreachable is not
    expired until live executors have had the watch's grace to renew it (`expire_lapsed`).

    Args:
        engine: The shared engine.
        watch: This process's view of PostgreSQL's outages (a fresh one by default).
    """

    def __init__(self, engine: AsyncEngine, *, watch: OutageWatch | None = None) -> None:
        self._engine = engine
        self._single = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.watch = watch or OutageWatch()

    @_postgres
    async def add(self, run: Run) -> None:
        """Insert a new run; a second run of the owner with the same idempotency key is refused."""
        try:
            async with driver_connection(self._engine) as conn:
                await conn.execute(INSERT_RUN, *run_arguments(run))
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name == _IDEMPOTENCY_INDEX:
                raise IdempotencyConflict(f"idempotency key {run.idempotency_key!r} is already in use") from None
            raise

    @_postgres
    async def get(self, run_id: RunId) -> Run | None:
        """The run, or None (also for an id that is not a UUID)."""
        if not is_uuid(run_id):
            return None
        async with driver_connection(self._engine) as conn:
            row = await conn.fetchrow(GET_RUN, run_id)
        return None if row is None else row_to_run(row)

    @_postgres
    async def get_by_idempotency_key(self, owner: OwnerId, key: str) -> Run | None:
        """The owner's run created with this key, or None."""
        async with driver_connection(self._engine) as conn:
            row = await conn.fetchrow(GET_RUN_BY_KEY, owner, key)
        return None if row is None else row_to_run(row)

    @_postgres
    async def save(self, run: Run) -> None:
        """Write this version of the run unless a newer attempt owns it (then raise StaleAttempt)."""
        try:
            async with driver_connection(self._engine) as conn:
                if await conn.fetchval(SAVE_RUN, *run_arguments(run)) is not None:
                    return
                fence = await conn.fetchrow(RUN_FENCE, run.id)
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name == _IDEMPOTENCY_INDEX:
                raise IdempotencyConflict(f"idempotency key {run.idempotency_key!r} is already in use") from None
            raise
        held = "gone" if fence is None else f"{fence['status']} under attempt {fence['attempt']}"
        raise StaleAttempt(f"run {run.id} is {held}; attempt {run.attempt} cannot write it")

    @_postgres
    async def claim(self, run_id: RunId, *, attempt: int, now: datetime, until: datetime) -> Run | None:
        """One UPDATE, a compare-and-set on `attempt`: the domain's `claimable` and `claim` done in place.

        The statement repeats the domain rule in SQL so that the check and the change are one atomic
        step: of two executors claiming the same run, the second finds the attempt moved on.
        """
        if not is_uuid(run_id):
            return None
        async with driver_connection(self._engine) as conn:
            row = await conn.fetchrow(CLAIM_RUN, run_id, attempt, now, until)
        return None if row is None else row_to_run(row)

    @_postgres
    async def request_cancel(self, run_id: RunId) -> None:
        """Set the cancel flag of a running run; any other run is left as it is."""
        if not is_uuid(run_id):
            return
        query = (
            update(runs)
            .where(runs.c.id == run_id, runs.c.status == RunStatus.RUNNING.value)
            .values(cancel_requested=True)
        )
        async with self._single.connect() as conn:
            await conn.execute(query)

    @_postgres
    async def children(self, run_id: RunId) -> list[Run]:
        """The run's children, oldest first (`ix_runs_parent_run_id_created_at`)."""
        if not is_uuid(run_id):
            return []
        query = select(runs).where(runs.c.parent_run_id == run_id).order_by(runs.c.created_at, runs.c.id)
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_run(row) for row in rows]

    @_postgres
    async def lapsed(self, now: datetime, *, limit: int = 100, after: LapsedCursor | None = None) -> list[Run]:
        """Unfinished runs whose lease expired before `now` (see `expire_lapsed` on outages), longest-lapsed first.

        Keyset paging on (expires_at, id), which the partial index on unfinished runs' expiry serves.
        """
        query = (
            select(runs)
            .where(runs.c.status.in_(_EXECUTABLE), runs.c.expires_at < self.watch.lapse_cutoff(now))
            .order_by(runs.c.expires_at, runs.c.id)
            .limit(limit)
        )
        if after is not None:
            query = query.where(
                tuple_(runs.c.expires_at, runs.c.id)
                > tuple_(literal(after[0], runs.c.expires_at.type), literal(after[1], runs.c.id.type))
            )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_run(row) for row in rows]

    @_postgres
    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        """Set the heartbeat and extend the lease of those runs that are still pending or running.

        Returns the renewed runs whose cancel was requested (one statement does both).
        """
        ids = [run_id for run_id in run_ids if is_uuid(run_id)]
        if not ids:
            return set()
        query = (
            update(runs)
            .where(runs.c.id.in_(ids), runs.c.status.in_(_EXECUTABLE))
            .values(heartbeat_at=now, expires_at=until)
            .returning(runs.c.id, runs.c.cancel_requested)
        )
        async with self._single.connect() as conn:
            rows = (await conn.execute(query)).all()
        return {RunId(str(run_id)) for run_id, cancel_requested in rows if cancel_requested}

    @_postgres
    async def expire_lapsed(self, now: datetime, *, reason: str, limit: int = 100, min_attempt: int = 0) -> list[Run]:
        """Move unfinished runs whose lease lapsed to `expired`, atomically; return them.

        The rows are locked while they change (FOR UPDATE), so a lease renewed meanwhile is seen and
        the run is left alone; SKIP LOCKED lets two sweepers share the work instead of doing it twice.
        The change itself is the domain's `expire`, the same the in-memory repository applies.

        Just after an outage, only leases that lapsed before it began count (`OutageWatch.lapse_cutoff`):
        during it no executor could renew, and once the database is back a live one renews within
        a second or two; without this, a sweep in that moment would expire finished work waiting to be saved.
        """
        query = (
            select(runs)
            .where(
                runs.c.status.in_(_EXECUTABLE),
                runs.c.expires_at < self.watch.lapse_cutoff(now),
                # the attempts that lost their executor: a pause ends an attempt as it should
                runs.c.attempt - runs.c.pauses >= min_attempt,
            )
            .order_by(runs.c.expires_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        async with self._engine.begin() as conn:
            lapsed = (await conn.execute(query)).mappings().all()
            expired = [expire(row_to_run(row), now=now, reason=reason) for row in lapsed]
            if expired:
                await conn.execute(_EXPIRE, [_expiry_values(run) for run in expired])
        return expired

    @_postgres
    async def save_answer(self, run: Run, *, expected: RequiredAction) -> bool:
        """Store a paused run's answered action (and its return to running) if it still waits with `expected`.

        One compare-and-set UPDATE (sent by asyncpg itself: a child run's end makes one): of two answers
        given at once, the second finds the action changed.
        """
        if not is_uuid(run.id):
            return False
        async with driver_connection(self._engine) as conn:
            return await conn.fetchval(SAVE_ANSWER, *answer_arguments(run, expected)) is not None

    @_postgres
    async def stalled_waits(self, now: datetime, *, limit: int = 100) -> list[Run]:
        """Waiting runs whose expiry passed, oldest expiry first (`ix_runs_waiting_expires_at`)."""
        query = (
            select(runs)
            .where(runs.c.status == RunStatus.WAITING.value, runs.c.expires_at < now)
            .order_by(runs.c.expires_at, runs.c.id)
            .limit(limit)
        )
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_run(row) for row in rows]

    @_postgres
    async def expire_unanswered(self, now: datetime, *, reason: str, limit: int = 100) -> list[Run]:
        """End `expired` the paused runs whose action's deadline passed; return them (locked as they change)."""
        query = (
            select(runs)
            .where(runs.c.status == RunStatus.REQUIRES_ACTION.value, runs.c.expires_at < now)
            .order_by(runs.c.expires_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        async with self._engine.begin() as conn:
            waiting = (await conn.execute(query)).mappings().all()
            expired = [expire(row_to_run(row), now=now, reason=reason) for row in waiting]
            if expired:
                await conn.execute(_EXPIRE, [_expiry_values(run) for run in expired])
        return expired

    @_postgres
    async def delete_finished_before(self, cutoff: datetime) -> int:
        """Delete runs that finished before `cutoff`; their steps go with them (ON DELETE CASCADE).

        Deletes in batches, each its own transaction, so pruning a large table never holds long locks.
        """
        batch = select(runs.c.id).where(runs.c.finished_at < cutoff).limit(_PRUNE_BATCH).scalar_subquery()
        query = delete(runs).where(runs.c.id.in_(batch))
        total = 0
        while True:
            async with self._engine.begin() as conn:
                deleted = (await conn.execute(query)).rowcount
            total += deleted
            if deleted < _PRUNE_BATCH:
                return total
