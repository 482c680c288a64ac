"""ListRuns: an owner's runs, newest first, filtered, a page at a time behind an opaque cursor."""

import base64
import binascii
from datetime import datetime
from typing import Final

import msgspec

from agentkit.application.errors import CursorNotFound, InvalidListing
from agentkit.application.ports.run_listing import RunCursor, RunFilter, RunListing
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.run import Run, RunStatus

MAX_PAGE: Final = 200
DEFAULT_PAGE: Final = 50


class ListRunsInput(msgspec.Struct, frozen=True, kw_only=True):
    """Which runs, and which page of them.

    Attributes:
        owner: The caller (None: the admin CLI, every owner's runs).
        statuses: Only these statuses (empty: any).
        session_id: Only this session's runs.
        agent: Only this agent's runs.
        created_before: Only runs created before this time.
        created_after: Only runs created at or after this time.
        parent_run_id: Only the child runs of this run.
        limit: Runs per page, 1 to MAX_PAGE.
        cursor: The `next_cursor` of the page before, to continue after it.
    """

    owner: OwnerId | None
    statuses: frozenset[RunStatus] = frozenset()
    session_id: SessionId | None = None
    agent: str | None = None
    created_before: datetime | None = None
    created_after: datetime | None = None
    parent_run_id: RunId | None = None
    limit: int = DEFAULT_PAGE
    cursor: str | None = None


class RunPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of runs, and the cursor of the next (None on the last page)."""

    runs: list[Run]
    next_cursor: str | None


class ListRuns:
    """List runs by keyset pagination.

    Rules:
    - Runs are ordered by creation time then id, newest first; a page continues strictly after the
      cursor, so runs created while a client pages (newer than any cursor) never shift a page: no
      run is repeated and none that existed when paging began is skipped.
    - Only the owner's runs are listed; the cursor carries no owner, so another key's cursor lists
      that key's own runs, never the first key's.
    - A limit out of range is refused, and a cursor this API did not give names no page (not
      found), before anything is read. An empty time range lists nothing.
    """

    def __init__(self, *, listing: RunListing) -> None:
        self._listing = listing

    async def execute(self, inp: ListRunsInput) -> RunPage:
        """One page of runs.

        Raises:
            InvalidListing: the limit is out of range.
            CursorNotFound: the cursor is not one this API gave.
        """
        if not 1 <= inp.limit <= MAX_PAGE:
            raise InvalidListing(f"limit must be between 1 and {MAX_PAGE}")
        after = None if inp.cursor is None else decode_cursor(inp.cursor)
        where = RunFilter(
            owner=inp.owner,
            statuses=inp.statuses,
            session_id=inp.session_id,
            agent=inp.agent,
            created_before=inp.created_before,
            created_after=inp.created_after,
            parent_run_id=inp.parent_run_id,
        )
        found = await self._listing.list_runs(where, after=after, limit=inp.limit + 1)
        page = found[: inp.limit]
        more = len(found) > inp.limit
        return RunPage(runs=page, next_cursor=encode_cursor(page[-1]) if more and page else None)


def encode_cursor(run: Run) -> str:
    """The opaque cursor of a page ending at `run`."""
    raw = msgspec.json.encode(RunCursor(created_at=run.created_at, id=run.id))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> RunCursor:
    """The position a cursor names.

    Raises:
        CursorNotFound: it is not a cursor this API gave.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        found = msgspec.json.decode(raw, type=RunCursor)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise CursorNotFound(_NO_PAGE) from None
    if found.created_at.tzinfo is None:
        raise CursorNotFound(_NO_PAGE)
    return found


_NO_PAGE = "the cursor names no page of this listing; start again without it"
