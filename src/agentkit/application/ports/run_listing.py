"""The RunListing port: an owner's runs, newest first, a page at a time."""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol

import msgspec

from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.run import Run, RunStatus


class RunCursor(msgspec.Struct, frozen=True, kw_only=True):
    """Where a page ended: the last run's creation time and id (the listing's sort key)."""

    created_at: datetime
    id: RunId


class RunFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which runs to list.

    Attributes:
        owner: Only this owner's runs; None (the admin CLI) for everyone's.
        statuses: Only runs in one of these statuses (empty: any).
        session_id: Only runs of this session.
        agent: Only runs of this agent.
        created_before: Only runs created strictly before this time.
        created_after: Only runs created at or after this time.
        parent_run_id: Only the child runs of this run.
    """

    owner: OwnerId | None
    statuses: frozenset[RunStatus] = frozenset()
    session_id: SessionId | None = None
    agent: str | None = None
    created_before: datetime | None = None
    created_after: datetime | None = None
    parent_run_id: RunId | None = None


class RunListing(Protocol):
    """Lists runs by keyset: ordered by (created_at, id) descending, a page continuing after a cursor.

    Keyset, not offset: a run inserted while a client pages (it is newer than every cursor) never
    shifts a page, so no run is repeated or skipped.
    """

    @abstractmethod
    async def list_runs(self, where: RunFilter, *, after: RunCursor | None, limit: int) -> list[Run]:
        """At most `limit` matching runs, newest first, all older than `after` when it is given."""
