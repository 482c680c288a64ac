"""ListRuns on the in-memory listing: keyset pages, filters, owners, and refusals before any read."""

from datetime import UTC, datetime, timedelta

import pytest

from agentkit.adapters.memory import InMemoryRunListing, InMemoryRunRepository
from agentkit.application.errors import ApplicationError, CursorNotFound, InvalidListing
from agentkit.application.runs.list_runs import ListRuns, ListRunsInput, decode_cursor, encode_cursor
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus

T0 = datetime(2026, 12, 1, tzinfo=UTC)
ANN, BOB = OwnerId("ann"), OwnerId("bob")


async def stored(*runs: Run) -> ListRuns:
    repository = InMemoryRunRepository()
    for run in runs:
        await repository.add(run)
    return ListRuns(listing=InMemoryRunListing(repository))


def run(n: int, owner: OwnerId = ANN, *, same_time: bool = False, **extra: object) -> Run:
    created = T0 if same_time else T0 + timedelta(seconds=n)
    return Run(id=RunId(f"run-{n:03d}"), owner=owner, goal="g", created_at=created, **extra)  # type: ignore[arg-type]


async def test_pages_follow_each_other_newest_first_even_within_one_instant() -> None:
    lister = await stored(*(run(n, same_time=n % 2 == 0) for n in range(25)), run(99, BOB))

    seen: list[str] = []
    cursor = None
    while True:
        page = await lister.execute(ListRunsInput(owner=ANN, limit=10, cursor=cursor))
        seen += [r.id for r in page.runs]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor

    assert len(seen) == len(set(seen)) == 25
    assert "run-099" not in seen
    assert seen[0] == "run-023"  # the newest


async def test_the_last_full_page_has_no_next_cursor() -> None:
    lister = await stored(*(run(n) for n in range(10)))

    page = await lister.execute(ListRunsInput(owner=ANN, limit=10))

    assert (len(page.runs), page.next_cursor) == (10, None)


async def test_filters_combine() -> None:
    lister = await stored(run(1, status=RunStatus.FAILED), run(2, session_id="s"), run(3, session_id="s"))

    failed = await lister.execute(ListRunsInput(owner=ANN, statuses=frozenset({RunStatus.FAILED})))
    session = await lister.execute(ListRunsInput(owner=ANN, session_id="s", created_before=T0 + timedelta(seconds=3)))  # type: ignore[arg-type]
    everyone = await lister.execute(ListRunsInput(owner=None, created_after=T0 + timedelta(seconds=2)))

    assert [r.id for r in failed.runs] == ["run-001"]
    assert [r.id for r in session.runs] == ["run-002"]
    assert [r.id for r in everyone.runs] == ["run-003", "run-002"]


@pytest.mark.parametrize(
    ("inp", "error", "message"),
    [
        (ListRunsInput(owner=ANN, limit=0), InvalidListing, "limit must be between 1 and 200"),
        (ListRunsInput(owner=ANN, limit=201), InvalidListing, "limit must be between 1 and 200"),
        (ListRunsInput(owner=ANN, cursor="%%%"), CursorNotFound, "the cursor names no page"),
        (ListRunsInput(owner=ANN, cursor="e30"), CursorNotFound, "the cursor names no page"),
    ],
)
async def test_bad_requests_are_refused(inp: ListRunsInput, error: type[ApplicationError], message: str) -> None:
    lister = await stored(run(1))

    with pytest.raises(error, match=message):
        await lister.execute(inp)


async def test_an_empty_time_range_lists_nothing() -> None:
    lister = await stored(run(1))

    page = await lister.execute(ListRunsInput(owner=ANN, created_after=T0, created_before=T0))

    assert page.runs == []


def test_a_cursor_names_the_run_it_ends_at() -> None:
    found = decode_cursor(encode_cursor(run(7)))

    assert (found.created_at, found.id) == (T0 + timedelta(seconds=7), "run-007")
