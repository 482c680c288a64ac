"""Stopping the app while PostgreSQL is down: bounded, every run it gives up logged, and ended later."""

import asyncio
import signal
import time

import pytest
import structlog

from tests.faults.conftest import FaultStack
from tests.faults.load import Load, settled_runs

pytestmark = pytest.mark.faults
_log = structlog.get_logger(__name__)

# uvicorn's drain, the scheduler's grace for runs (10 s), the runs' last bounded try (6 s), the
# trace writer's last wait (5 s); the rest is slack for a loaded machine.
SHUTDOWN_BOUND_S = 10 + 6 + 5 + 9
LEASE_S = "3"  # short, so the runs given up are expired soon after


async def test_stopping_during_an_outage_is_bounded_and_a_successor_resumes_what_it_gave_up(stack: FaultStack) -> None:
    app = stack.app(RUN_LEASE_S=LEASE_S)
    await asyncio.to_thread(app.start)
    load = Load(app.url, clients=12)
    running = asyncio.create_task(load.run())
    await asyncio.sleep(2.0)
    await asyncio.to_thread(stack.postgres.stop)
    await asyncio.sleep(1.5)  # runs that have their answer are retrying their trace and final status now
    load.stop.set()
    await asyncio.wait_for(running, 60)

    took_s = await asyncio.to_thread(app.stop, signal.SIGTERM)

    assert took_s <= SHUTDOWN_BOUND_S
    assert app.count("api_stopped") == {"api_stopped": 1}  # a graceful stop (uvicorn then re-raises SIGTERM)
    gave_up = {
        str(event["run_id"])
        for event in app.events()
        # runs that had their answer, runs not yet started, and runs mid-way whose hand-back failed
        if event.get("event") in ("run_final_save_abandoned", "run_start_abandoned", "run_hand_back_failed")
    }
    assert gave_up  # the outage caught runs, and the process said which it could not store
    assert not [line for line in app.events() if "never retrieved" in str(line.get("event"))]
    # PostgreSQL back, another process on the same database: its sweeper resumes what was given up
    await asyncio.to_thread(stack.postgres.start)
    successor = stack.app("successor", RUN_LEASE_S=LEASE_S)
    await asyncio.to_thread(successor.start)
    try:
        began = time.monotonic()
        rows = await settled_runs(stack.dsn, timeout_s=60)
    finally:
        await asyncio.to_thread(successor.stop)
    assert not [row for row in rows if row.status in ("pending", "running")], time.monotonic() - began
    resumed = {row.id: row for row in rows if row.id in gave_up}
    assert set(resumed) == gave_up
    # each ended: with its answer where the stored trace held it, or failed saying why (a `pause`
    # call that may have run is not run again); none was left to expire
    assert all(row.status in ("succeeded", "failed") for row in resumed.values()), resumed
    assert all(row.failure_reason for row in resumed.values() if row.status == "failed")
    assert not [row for row in rows if row.status == "expired"]
    trace_lost = sum(int(e.get("steps", 0)) for e in app.events() if e.get("event") == "trace_steps_abandoned")
    _log.info("shutdown_outcome", took_s=round(took_s, 1), runs_given_up=len(gave_up), steps_given_up=trace_lost)
