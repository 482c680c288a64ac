"""PostgreSQL stopped, and frozen, under load through the real app: refusals are 503s, nothing finished is lost."""

import asyncio

import pytest

from tests.faults.app import DATABASE_CALL_BOUND_S, AppServer
from tests.faults.conftest import FREEZE_S, OUTAGE_S, FaultStack
from tests.faults.load import Tally
from tests.faults.scenario import Outcome, under_load

pytestmark = pytest.mark.faults

# While PostgreSQL is frozen a read waits at most for one database call; a POST also waits for its run
# first, for RESPONSE_TIMEOUT_S (1 s in that test). The rest is slack for a loaded 2-core machine; the
# bounds stay below the freeze (10 s), which is what an unbounded request would wait.
FROZEN_RESPONSE_S = 1.0
READ_BOUND_S = DATABASE_CALL_BOUND_S + 3.0
POST_BOUND_S = READ_BOUND_S + FROZEN_RESPONSE_S
HEALTH_BOUND_S = 2.0 + 1.5  # /health's own bound, and slack


def assert_nothing_lost(tally: Tally) -> None:
    """The rules every outage must keep."""
    assert tally.server_errors == 0, tally.answers
    assert tally.refusals_without_retry_after == 0
    assert tally.no_answer == 0, tally.answers
    assert tally.lost == [], tally.lost[:5]
    assert tally.stuck == [], tally.stuck[:5]
    assert tally.short_traces == [], tally.short_traces[:5]
    assert tally.told_succeeded_but_not == 0


def assert_recovered(outcome: Outcome) -> None:
    """Once the server is back, the same process serves runs again (no restart).

    What the outage left in flight (runs that retried their writes meanwhile) holds places until it
    drains, which on a busy machine can take a few seconds: a refusal for capacity (`overloaded`,
    with Retry-After) is the admission cap doing its job then. A refusal for the store is not.
    """
    late = outcome.after_recovery("post")
    assert late, "no load after the recovery"
    refused = [(a.status, a.code) for a in late if a.status not in (201, 202) and a.code != "overloaded"]
    assert not refused, refused
    assert all(a.retry_after for a in late if a.code == "overloaded")
    assert any(a.status in (201, 202) for a in late), "no run accepted after the recovery"


async def test_a_postgres_stop_under_load_refuses_with_503_and_loses_no_finished_run(
    stack: FaultStack, app: AppServer
) -> None:
    outcome = await under_load(
        app,
        stack.dsn,
        fault=lambda: asyncio.to_thread(stack.postgres.stop),
        mend=lambda: asyncio.to_thread(stack.postgres.start),
        hold_s=OUTAGE_S,
    )

    assert_nothing_lost(outcome.tally)
    assert_recovered(outcome)
    assert outcome.tally.refusals > 0  # the outage was felt...
    assert outcome.caught  # ...by runs mid-work too, and every one of them succeeded with its whole trace
    assert app.count("unhandled_error", "run_crashed", "trace_write_failed") == {}


async def test_a_frozen_postgres_answers_requests_and_health_within_their_bounds(stack: FaultStack) -> None:
    assert FREEZE_S > POST_BOUND_S, "AGENTKIT_FAULT_FREEZE_S: the freeze must outlast the bounds to show them"
    # a lease shorter than the freeze too: the leases lapse while PostgreSQL is frozen, and must not
    # cost the runs holding them; and a run whose INSERT landed as the server froze, its client told
    # 503, is ended by the sweeper soon after (see "ended before any work")
    app = stack.app(RESPONSE_TIMEOUT_S=str(FROZEN_RESPONSE_S), RUN_LEASE_S=str(round(FREEZE_S * 0.8, 1)))
    await asyncio.to_thread(app.start)
    try:
        outcome = await under_load(
            app,
            stack.dsn,
            fault=lambda: asyncio.to_thread(stack.postgres.freeze),
            mend=lambda: asyncio.to_thread(stack.postgres.thaw),
            hold_s=FREEZE_S,
        )
    finally:
        await asyncio.to_thread(app.stop)

    assert_nothing_lost(outcome.tally)
    assert_recovered(outcome)
    posts = outcome.waits_during_fault("post")
    reads = outcome.waits_during_fault("get") + outcome.waits_during_fault("trace")
    health = outcome.waits_during_fault("health")
    assert posts
    assert reads
    assert health
    assert max(reads) <= READ_BOUND_S, sorted(reads)[-5:]
    assert max(posts) <= POST_BOUND_S, sorted(posts)[-5:]
    assert max(health) <= HEALTH_BOUND_S, sorted(health)[-5:]
    frozen = outcome.load.sent_between(outcome.fault_start, outcome.fault_end, "health")
    assert any(a.status == 503 for a in frozen)  # it said the database was down, rather than hang
    assert outcome.caught
    assert app.count("unhandled_error", "run_crashed", "trace_write_failed") == {}


async def test_runs_whose_lease_lapsed_during_the_outage_are_not_taken_for_dead(stack: FaultStack) -> None:
    # a lease shorter than the outage: every held lease lapses while nobody can renew it, and the
    # sweeper looks every half lease, so it is there when PostgreSQL comes back
    app = stack.app(RUN_LEASE_S=str(round(OUTAGE_S * 0.6, 1)))
    await asyncio.to_thread(app.start)
    try:
        outcome = await under_load(
            app,
            stack.dsn,
            fault=lambda: asyncio.to_thread(stack.postgres.stop),
            mend=lambda: asyncio.to_thread(stack.postgres.start),
            hold_s=OUTAGE_S,
        )
    finally:
        await asyncio.to_thread(app.stop)

    assert_nothing_lost(outcome.tally)
    assert_recovered(outcome)
    assert outcome.caught
    assert app.count("run_expired", "run_lost_lease") == {}
