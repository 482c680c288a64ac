"""Durable runs in queue mode: an API, two workers, kill -9 at the worst moments, and nothing lost.

Every test starts the real processes (`agentkit serve` and `agentkit worker`) on private PostgreSQL
and Redis, with the counting model and the counted tools of `tests.faults.durable`. What each
asserts: every accepted run ends in a terminal status, resumed runs succeed, no LLM response is
asked for twice (a stored one asked for again, or one asked for by two live workers), and `charge`
(not idempotent) never runs twice for the same call.
"""

import asyncio
import os
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from agentkit.adapters.postgres import create_engine, parse_database_url
from agentkit.adapters.postgres.tables import runs as runs_table
from tests.faults.conftest import FaultStack
from tests.faults.durable import TREE_AGENTS, CountingModel, QueueWorld, asked_twice, busy_cpus, wait_for

pytestmark = pytest.mark.faults

RUNS = 50
LEASE_S = 3.0
# AGENTKIT_FAULT_CPU_BURNERS=4: processes spinning on the cores while 50 runs go through the kill
# (4 on a 2-core machine: twice as much work as it has cores), for the figures in docs/benchmarks.md
CPU_BURNERS = int(os.environ.get("AGENTKIT_FAULT_CPU_BURNERS") or 0)
# The bound on a whole scenario: a lease period for the dead worker's runs to lapse, a sweep, and
# the remaining work, with ample room for a loaded two-core machine.
SETTLE_S = 180.0


@pytest.fixture
def model() -> Iterator[CountingModel]:
    """The counting model server."""
    with CountingModel(delay_s=0.1) as server:
        yield server


@pytest.fixture
async def world(stack: FaultStack, model: CountingModel) -> AsyncIterator[QueueWorld]:
    """The API and two workers, started; killed afterwards."""
    queue_world = QueueWorld(stack, model)
    try:
        await asyncio.to_thread(queue_world.start)
        yield queue_world
    finally:
        await asyncio.to_thread(queue_world.stop)


async def submit(client: httpx.AsyncClient, goals: list[str]) -> list[str]:
    """Accept the runs (async) and return their ids."""
    ids = []
    for goal in goals:
        response = await client.post("/v1/runs", json={"goal": goal}, headers={"Prefer": "respond-async"})
        assert response.status_code == 202, response.text
        ids.append(response.json()["id"])
    return ids


async def settled(client: httpx.AsyncClient, ids: list[str], timeout_s: float = SETTLE_S) -> list[dict[str, Any]]:
    """Every run once it ended; fails the test if one is still unfinished after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    ended: dict[str, dict[str, Any]] = {}
    while len(ended) < len(ids):
        assert time.monotonic() < deadline, f"runs still unfinished: {sorted(set(ids) - set(ended))[:5]}"
        for run_id in ids:
            if run_id not in ended:
                run = (await client.get(f"/v1/runs/{run_id}", params={"wait": 0})).json()
                if run["status"] not in ("pending", "running"):
                    ended[run_id] = run
        await asyncio.sleep(0.2)
    return [ended[run_id] for run_id in ids]


async def repeated_answers(
    world: QueueWorld, client: httpx.AsyncClient, runs: list[dict[str, Any]], *, killed: frozenset[str] = frozenset()
) -> dict[str, list[str]]:
    """The runs with an LLM response asked for twice (but what the `killed` workers asked), and which."""
    repeated: dict[str, list[str]] = {}
    for run in runs:
        trace = (await client.get(f"/v1/runs/{run['id']}/trace")).json()
        found = asked_twice(world.model, run["goal"], trace, lost=killed)
        if found:
            repeated[run["id"]] = found
    return repeated


async def assert_nothing_repeated(
    world: QueueWorld, client: httpx.AsyncClient, runs: list[dict[str, Any]], *, killed: frozenset[str] = frozenset()
) -> None:
    """No LLM response asked for twice (but what the `killed` workers asked); no `charge` call executed twice."""
    assert await repeated_answers(world, client, runs, killed=killed) == {}
    twice = {call: count for call, count in world.charged().items() if count > 1}
    assert twice == {}


async def test_kill_9_of_one_of_two_workers_with_50_runs_in_flight_loses_none(world: QueueWorld) -> None:
    goals = [f"task {i}" for i in range(RUNS)]
    killed = frozenset({"worker-0"})
    with busy_cpus(CPU_BURNERS):
        async with world.client() as client:
            ids = await submit(client, goals)
            # in flight on both workers, waiting on the model or inside `lookup` (idempotent): half the
            # first answers are out, and no run has reached `charge` yet (its kill has a test of its own
            # below, since a side effect that may have happened is never repeated: such a run fails, saying so)
            await asyncio.to_thread(wait_for, lambda: world.model.total >= RUNS // 2, 120, "runs in flight")
            killed_at = time.monotonic()
            await asyncio.to_thread(world.workers[0].kill)

            runs = await settled(client, ids)
            settled_after_s = time.monotonic() - killed_at
            repeated = await repeated_answers(world, client, runs, killed=killed)
    survivor = world.workers[1].count("run_resumed", "run_lost_lease", "lease_confirmed")

    statuses = [run["status"] for run in runs]
    others = {run["id"]: (run["status"], run["failure_reason"]) for run in runs if run["status"] != "succeeded"}
    # who made the side effect of each run that did not succeed: the killed worker, or a live one
    charged_by = sorted(
        "+".join(world.model.callers[serial] for serial in world.model.requests[(run["goal"], 1)])
        for run in runs
        if run["status"] != "succeeded"
    )
    print(
        f"\nkill -9 of 1 of 2 workers, {RUNS} runs, {CPU_BURNERS} busy processes: "
        f"{statuses.count('succeeded')} succeeded, {survivor['run_resumed']} resumed, all ended "
        f"{settled_after_s:.1f} s after the kill (lease {LEASE_S:g} s); answers asked for twice: "
        f"{sum(map(len, repeated.values()))} in {len(repeated)} runs; the survivor lost "
        f"{survivor['run_lost_lease']} leases, confirmed {survivor['lease_confirmed']}; "
        f"not succeeded: {sorted(str(reason)[:40] for _, reason in others.values())}, charge asked by {charged_by}"
    )
    assert statuses.count("succeeded") >= RUNS - 1, others
    assert all(reason for _, reason in others.values())  # the rest say why
    assert repeated == {}
    assert {call: count for call, count in world.charged().items() if count > 1} == {}
    assert survivor["run_resumed"] >= 1  # the dead worker's runs were taken over, not started over


async def test_a_worker_killed_while_a_side_effect_runs_fails_that_run_instead_of_repeating_it(
    stack: FaultStack, model: CountingModel
) -> None:
    world = QueueWorld(stack, model, FAULT_CHARGE_S="30", WORKER_CONCURRENCY="5")
    try:
        await asyncio.to_thread(world.start, 1)
        async with world.client() as client:
            [run_id] = await submit(client, ["charge me"])
            await asyncio.to_thread(wait_for, lambda: bool(world.charged()), 120, "the charge to start")
            await asyncio.to_thread(world.workers[0].kill)
            await asyncio.to_thread(world.add_worker, "worker-after")

            [run] = await settled(client, [run_id])

            assert run["status"] == "failed"
            assert "interrupted while the tool 'charge'" in run["failure_reason"]
            assert "not idempotent, so it was not run again" in run["failure_reason"]
            assert world.charged() == {(run_id, "call_charge"): 1}
            await assert_nothing_repeated(world, client, [run], killed=frozenset({"worker-0"}))
    finally:
        await asyncio.to_thread(world.stop)


async def tool_steps_stored(client: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    """The run's tool steps as PostgreSQL holds them now."""
    trace = (await client.get(f"/v1/runs/{run_id}/trace")).json()
    return [step for step in trace["steps"] if step["kind"] == "tool"]


async def until_stored(client: httpx.AsyncClient, run_id: str, calls: set[str], timeout_s: float = 120.0) -> None:
    """Wait until these calls' steps are in the stored trace (bounded generously: a loaded machine is slow)."""
    deadline = time.monotonic() + timeout_s
    while {step["call_id"] for step in await tool_steps_stored(client, run_id)} < calls:
        assert time.monotonic() < deadline, f"the steps of {sorted(calls)} were not stored within {timeout_s:g} s"
        await asyncio.sleep(0.1)


async def test_a_worker_killed_mid_batch_leaves_another_to_make_only_the_calls_without_a_result(
    stack: FaultStack, model: CountingModel
) -> None:
    # one turn asks for lookups of a, slow and b at once; on the first worker `slow` takes a minute
    world = QueueWorld(stack, model, WORKER_CONCURRENCY="5")
    try:
        await asyncio.to_thread(world.api.start)
        await asyncio.to_thread(world.add_worker, "worker-0", FAULT_SLOW_S="60")
        async with world.client() as client:
            [run_id] = await submit(client, ["batch: three lookups"])
            await until_stored(client, run_id, {"call_a", "call_b"})  # `slow` still runs
            assert world.looked_up() == {(run_id, "call_a"): 1, (run_id, "call_slow"): 1, (run_id, "call_b"): 1}
            await asyncio.to_thread(world.workers[0].kill)
            await asyncio.to_thread(world.add_worker, "worker-after")

            [run] = await settled(client, [run_id])

            assert run["status"] == "succeeded", run
            # the lookups whose results were stored are not made again; the interrupted one is
            assert world.looked_up() == {(run_id, "call_a"): 1, (run_id, "call_slow"): 2, (run_id, "call_b"): 1}
            assert sorted(step["call_id"] for step in await tool_steps_stored(client, run_id)) == [
                "call_a",
                "call_b",
                "call_slow",
            ]
            await assert_nothing_repeated(world, client, [run], killed=frozenset({"worker-0"}))
    finally:
        await asyncio.to_thread(world.stop)


async def test_a_worker_killed_while_a_side_effect_of_a_batch_runs_fails_the_run_naming_it(
    stack: FaultStack, model: CountingModel
) -> None:
    # one turn asks for a lookup and a charge at once; on the first worker the charge takes a minute
    world = QueueWorld(stack, model, WORKER_CONCURRENCY="5")
    try:
        await asyncio.to_thread(world.api.start)
        await asyncio.to_thread(world.add_worker, "worker-0", FAULT_CHARGE_S="60")
        async with world.client() as client:
            [run_id] = await submit(client, ["batch+charge: look up and charge"])
            await until_stored(client, run_id, {"call_a"})
            await asyncio.to_thread(wait_for, lambda: bool(world.charged()), 120, "the charge to start")
            await asyncio.to_thread(world.workers[0].kill)
            await asyncio.to_thread(world.add_worker, "worker-after")

            [run] = await settled(client, [run_id])

            assert run["status"] == "failed", run
            assert "interrupted while the tool 'charge' (call call_charge) ran" in run["failure_reason"]
            assert world.charged() == {(run_id, "call_charge"): 1}
            assert world.looked_up() == {(run_id, "call_a"): 1}
            await assert_nothing_repeated(world, client, [run], killed=frozenset({"worker-0"}))
    finally:
        await asyncio.to_thread(world.stop)


async def test_a_worker_whose_loop_stalls_past_its_lease_does_not_ask_the_model_for_the_run_another_resumed(
    stack: FaultStack, model: CountingModel
) -> None:
    # the first `lookup` blocks its worker's event loop for four leases: its lease lapses, the other
    # worker's sweeper resumes the run (from the stored first answer); the stalled one wakes up after
    marker = stack.work / "stalled"
    stall = {"FAULT_STALL_ONCE": str(marker), "FAULT_STALL_S": str(4 * LEASE_S), "FAULT_LOOKUP_S": "1"}
    world = QueueWorld(stack, model, **stall)
    try:
        await asyncio.to_thread(world.start)
        async with world.client() as client:
            [run_id] = await submit(client, ["stall"])
            await asyncio.to_thread(wait_for, marker.exists, 120, "a worker to stall")
            stalled_name = marker.read_text()
            [stalled] = [worker for worker in world.workers if worker.work.name == stalled_name]
            [other] = [worker for worker in world.workers if worker is not stalled]

            [run] = await settled(client, [run_id])
            await asyncio.to_thread(
                wait_for, lambda: stalled.count("run_lost_lease")["run_lost_lease"] >= 1, 120, "the stalled one to wake"
            )

            assert run["status"] == "succeeded", run
            assert other.count("run_resumed")["run_resumed"] == 1
            # each answer asked for once: the stalled worker did not ask for the turn after its lookup
            asked = {turn: len(serials) for (goal, turn), serials in model.requests.items() if goal == "stall"}
            assert asked == {0: 1, 1: 1, 2: 1}, model.requests
            assert world.charged() == {(run_id, "call_charge"): 1}
            await assert_nothing_repeated(world, client, [run])
    finally:
        await asyncio.to_thread(world.stop)


async def test_kill_9_of_the_api_while_sync_requests_wait_loses_no_run(world: QueueWorld, stack: FaultStack) -> None:
    goals = [f"sync {i}" for i in range(10)]
    async with world.client() as client:
        waiting = [asyncio.create_task(client.post("/v1/runs", json={"goal": goal})) for goal in goals]
        await asyncio.to_thread(wait_for, lambda: world.model.total >= 5, 120, "sync runs started")
        await asyncio.to_thread(world.api.kill)
        answered = await asyncio.gather(*waiting, return_exceptions=True)
    # the waiting clients lost their connection; the runs they started were accepted all the same
    assert any(isinstance(answer, httpx.HTTPError) for answer in answered)
    await asyncio.to_thread(world.api.start)  # a new API process

    engine = create_engine(parse_database_url(stack.dsn))
    try:
        async with engine.connect() as conn:
            ids = [str(run_id) for (run_id,) in (await conn.execute(select(runs_table.c.id))).all()]
    finally:
        await engine.dispose()
    async with world.client() as client:
        runs = await settled(client, ids)
        assert {run["goal"] for run in runs} <= set(goals)
        assert len(runs) >= 5
        assert {run["status"] for run in runs} == {"succeeded"}
        await assert_nothing_repeated(world, client, runs)


async def test_redis_and_postgres_restarts_while_workers_run_lose_no_run(world: QueueWorld, stack: FaultStack) -> None:
    goals = [f"restart {i}" for i in range(20)]
    async with world.client() as client:
        ids = await submit(client, goals)
        await asyncio.to_thread(wait_for, lambda: world.model.total >= 10, 120, "runs in flight")
        await asyncio.to_thread(stack.redis.stop)
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.redis.start)
        await asyncio.to_thread(stack.postgres.stop)
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.postgres.start)

        runs = await settled(client, ids)

        others = {run["id"]: (run["status"], run["failure_reason"]) for run in runs if run["status"] != "succeeded"}
        assert others == {}
        await assert_nothing_repeated(world, client, runs)


async def test_a_cancel_made_through_the_api_reaches_the_worker_before_the_next_step(
    stack: FaultStack, model: CountingModel
) -> None:
    # a lease renewal every 20 s: only the cancel event can reach the worker within the 3 s lookup
    world = QueueWorld(stack, model, FAULT_LOOKUP_S="3", RUN_LEASE_S="60")
    try:
        await asyncio.to_thread(world.start, 1)
        async with world.client() as client:
            [run_id] = await submit(client, ["cancel me"])
            await asyncio.to_thread(wait_for, lambda: world.model.total >= 1, 120, "the run to start")
            await asyncio.sleep(0.5)  # inside the lookup now
            cancelled = await client.post(f"/v1/runs/{run_id}/cancel")
            assert cancelled.status_code in (200, 202)

            ended = (await client.get(f"/v1/runs/{run_id}", params={"wait": 60})).json()

        assert ended["status"] == "cancelled"
        # stopped at the boundary after the lookup: the model was not asked again, nothing was charged
        assert world.model.total == 1
        assert world.charged() == {}
    finally:
        await asyncio.to_thread(world.stop)


async def test_a_run_paused_on_a_worker_is_approved_through_the_api_and_resumed_by_another_worker(
    world: QueueWorld,
) -> None:
    async with world.client() as client:
        response = await client.post(
            "/v1/runs",
            json={"goal": "charge after approval", "approval_required": ["charge"]},
            headers={"Prefer": "respond-async"},
        )
        run_id = response.json()["id"]
        [paused] = await settled(client, [run_id])
        assert paused["status"] == "requires_action"
        [waiting] = paused["required_action"]["calls"]
        assert (waiting["name"], waiting["arguments"]) == ("charge", {"amount": 5})
        assert world.charged() == {}
        # the workers that ran it are gone: whoever answers, a new worker resumes the run
        for worker in world.workers:
            await asyncio.to_thread(worker.kill)
        world.workers.clear()
        await asyncio.to_thread(world.add_worker, "worker-after")

        approved = await client.post(
            f"/v1/runs/{run_id}/approvals",
            json={"call_id": waiting["call_id"], "digest": waiting["digest"], "decision": "approve"},
        )
        assert approved.status_code == 200, approved.text
        [done] = await settled(client, [run_id])
        assert done["status"] == "succeeded", done
        assert list(world.charged().values()) == [1]
        await assert_nothing_repeated(world, client, [done])


async def ended(client: httpx.AsyncClient, run_id: str, timeout_s: float = SETTLE_S) -> dict[str, Any]:
    """The run once it reached a terminal status (a run waiting on its children has not)."""
    deadline = time.monotonic() + timeout_s
    while True:
        run: dict[str, Any] = (await client.get(f"/v1/runs/{run_id}", params={"wait": 5})).json()
        if run["status"] not in ("pending", "running", "waiting", "requires_action"):
            return run
        assert time.monotonic() < deadline, f"run {run_id} is still {run['status']}"


async def test_kill_9_of_the_worker_running_a_child_run_and_the_tree_still_succeeds(
    stack: FaultStack, model: CountingModel
) -> None:
    agents = stack.work / "agents.toml"
    agents.write_text(TREE_AGENTS)
    world = QueueWorld(stack, model, AGENTS_FILE=str(agents), FAULT_SLOW_S="6")
    try:
        await asyncio.to_thread(world.start, 2)
        async with world.client() as client:
            response = await client.post(
                "/v1/runs", json={"goal": "tree:x", "agent": "boss"}, headers={"Prefer": "respond-async"}
            )
            assert response.status_code == 202, response.text
            parent_id = response.json()["id"]
            # the child (on a queue worker) is in its slow lookup: kill -9 that worker
            await asyncio.to_thread(wait_for, lambda: bool(world.looked_up()), 120, "the child's lookup")
            [child_asker] = {world.model.callers[s] for s in world.model.requests[("child:x", 0)]}
            doomed = next(worker for worker in world.workers if worker.work.name == child_asker)
            await asyncio.to_thread(doomed.kill)

            parent = await ended(client, parent_id)
            tree = (await client.get(f"/v1/runs/{parent_id}")).json()
            [child_link] = tree["children"]
            child = (await client.get(child_link["link"])).json()
            killed = frozenset({child_asker})
            assert (parent["status"], child["status"]) == ("succeeded", "succeeded"), (parent, child)
            assert child["parent_run_id"] == parent_id
            assert await repeated_answers(world, client, [parent, child], killed=killed) == {}
            assert len(world.model.requests[("tree:x", 0)]) == 1  # the parent's turn was asked for once
            assert sum(world.looked_up().values()) == 2  # the child's idempotent lookup, again after the kill
    finally:
        await asyncio.to_thread(world.stop)
