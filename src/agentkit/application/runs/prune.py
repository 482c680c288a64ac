"""PruneOldRuns: forget finished runs, their steps and idle sessions older than an age (`agentkit prune`)."""

from datetime import timedelta

import msgspec

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore


class PruneInput(msgspec.Struct, frozen=True, kw_only=True):
    """How old is too old.

    Attributes:
        older_than_s: Runs that finished, and sessions last saved, more than this many seconds ago go.
    """

    older_than_s: float


class PruneResult(msgspec.Struct, frozen=True, kw_only=True):
    """What was deleted."""

    runs_deleted: int
    sessions_deleted: int


class PruneOldRuns:
    """Delete runs (with their steps) and sessions older than a given age.

    Rules:
    - Only runs in a terminal status are deleted, judged by when they finished; a pending or
      running run is never pruned, however old (the sweeper ends it first).
    - A session's age is the time since its last save; sessions also expire on their own TTL.
    - The age must be positive, so a slip of the finger cannot wipe everything that just finished.
    """

    def __init__(self, *, runs: RunRepository, sessions: SessionStore, clock: Clock) -> None:
        self._runs = runs
        self._sessions = sessions
        self._clock = clock

    async def execute(self, inp: PruneInput) -> PruneResult:
        """Delete what is older than `inp.older_than_s` and say how much went.

        Raises:
            ValueError: the age is not positive.
        """
        if inp.older_than_s <= 0:
            raise ValueError("the age to prune must be positive")
        cutoff = self._clock.now() - timedelta(seconds=inp.older_than_s)
        runs_deleted = await self._runs.delete_finished_before(cutoff)
        sessions_deleted = await self._sessions.delete_saved_before(cutoff)
        return PruneResult(runs_deleted=runs_deleted, sessions_deleted=sessions_deleted)
