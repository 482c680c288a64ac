"""RunListing contract: keyset pages by (created_at, id) descending, owner-scoped, with filters."""

import uuid
from datetime import UTC, datetime, timedelta

from agentkit.application.ports.run_listing import RunCursor, RunFilter
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.run import Run, RunStatus
from tests.contract.conftest import StateKit

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ANN, BOB = OwnerId(f"ann-{uuid.uuid4().hex[:6]}"), OwnerId(f"bob-{uuid.uuid4().hex[:6]}")


async def add(kit: StateKit, owner: OwnerId, seconds: int, **extra: object) -> Run:
    run = Run(
        id=RunId(str(uuid.uuid4())),
        owner=owner,
        goal="g",
        created_at=T0 + timedelta(seconds=seconds),
        **extra,  # type: ignore[arg-type]
    )
    await kit.runs.add(run)
    return run


async def test_pages_continue_after_the_cursor_newest_first_ties_broken_by_id(kit: StateKit) -> None:
    made = [await add(kit, ANN, seconds=n // 3) for n in range(9)]  # three runs per instant
    await add(kit, BOB, seconds=5)
    expected = sorted(made, key=lambda r: (r.created_at, r.id), reverse=True)

    first = await kit.listing.list_runs(RunFilter(owner=ANN), after=None, limit=4)
    last = first[-1]
    rest = await kit.listing.list_runs(
        RunFilter(owner=ANN), after=RunCursor(created_at=last.created_at, id=last.id), limit=100
    )

    assert [r.id for r in first + rest] == [r.id for r in expected]


async def test_filters_by_status_session_and_creation_time(kit: StateKit) -> None:
    early = await add(kit, ANN, seconds=1, session_id=SessionId("s"))
    middle = await add(kit, ANN, seconds=2, status=RunStatus.FAILED)
    late = await add(kit, ANN, seconds=3, session_id=SessionId("s"), status=RunStatus.FAILED)

    def ids(runs: list[Run]) -> list[str]:
        return [r.id for r in runs]

    listing = kit.listing
    failed = await listing.list_runs(RunFilter(owner=ANN, statuses=frozenset({RunStatus.FAILED})), after=None, limit=9)
    session = await listing.list_runs(RunFilter(owner=ANN, session_id=SessionId("s")), after=None, limit=9)
    window = RunFilter(owner=ANN, created_after=T0 + timedelta(seconds=2), created_before=T0 + timedelta(seconds=3))
    between = await listing.list_runs(window, after=None, limit=9)

    assert ids(failed) == [late.id, middle.id]
    assert ids(session) == [late.id, early.id]
    assert ids(between) == [middle.id]
    assert await listing.list_runs(RunFilter(owner=OwnerId("nobody")), after=None, limit=9) == []


async def test_filters_by_parent_run(kit: StateKit) -> None:
    parent = await add(kit, ANN, seconds=0)
    children = [await add(kit, ANN, seconds=n, parent_run_id=parent.id, lineage=("default",)) for n in (1, 2)]
    await add(kit, ANN, seconds=3)

    found = await kit.listing.list_runs(RunFilter(owner=ANN, parent_run_id=parent.id), after=None, limit=10)
    none = await kit.listing.list_runs(RunFilter(owner=ANN, parent_run_id=RunId("not-a-uuid")), after=None, limit=10)

    assert [run.id for run in found] == [run.id for run in reversed(children)]
    assert none == []


async def test_filters_by_agent(kit: StateKit) -> None:
    owner = OwnerId(f"cat-{uuid.uuid4().hex[:6]}")
    default = await add(kit, owner, seconds=1)
    researcher = await add(kit, owner, seconds=2, agent="researcher")

    found = await kit.listing.list_runs(RunFilter(owner=owner, agent="researcher"), after=None, limit=9)
    others = await kit.listing.list_runs(RunFilter(owner=owner, agent="default"), after=None, limit=9)

    assert [r.id for r in found] == [researcher.id]
    assert [r.id for r in others] == [default.id]
