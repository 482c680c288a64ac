"""Redis stopped under load through the real app: no 500s, runs go on (the limiter falls back), the app recovers."""

import asyncio

import pytest

from tests.faults.app import AppServer
from tests.faults.conftest import OUTAGE_S, FaultStack
from tests.faults.scenario import under_load
from tests.faults.test_postgres_outages import assert_nothing_lost, assert_recovered

pytestmark = pytest.mark.faults


async def test_a_redis_stop_under_load_refuses_with_503_and_loses_no_finished_run(
    stack: FaultStack, app: AppServer
) -> None:
    outcome = await under_load(
        app,
        stack.dsn,
        fault=lambda: asyncio.to_thread(stack.redis.stop),
        mend=lambda: asyncio.to_thread(stack.redis.start),
        hold_s=OUTAGE_S,
    )

    assert_nothing_lost(outcome.tally)
    assert_recovered(outcome)
    down = outcome.load.sent_between(outcome.fault_start + 0.5, outcome.fault_end)
    # new runs are still taken: the rate limit falls back to a per-process window while Redis is away
    assert any(a.kind == "post" and a.status in (201, 202) for a in down)
    assert all(a.status == 200 for a in down if a.kind in ("get", "trace"))
    assert outcome.caught  # runs in flight when Redis went away (their sessions unsaved) still succeeded
    assert app.count("unhandled_error", "run_crashed", "trace_write_failed") == {}
