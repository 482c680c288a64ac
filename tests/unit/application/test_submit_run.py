"""SubmitRun: the cap on runs in flight and the per-owner quota, with in-memory adapters and a gate tool."""

import asyncio
from typing import Any

import pytest

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRateLimiter,
    InMemoryRunEvents,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.scheduling import InlineRunScheduler
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.errors import IdempotencyMismatch, Overloaded, RateLimited, StoreUnavailable
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.submit_run import SubmitRun, SubmitRunResult
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.application.tools import Tool, ToolRegistry, tool
from agentkit.domain.errors import InvalidGoal
from agentkit.domain.run import Run, RunStatus
from tests.unit.application.harness import OWNER, answer, call, calls

GATE = calls(call("wait_for_gate"))


class Gate:
    """Holds every `wait_for_gate` call until the test opens it; counts the calls inside."""

    def __init__(self) -> None:
        self.inside = 0
        self.opened = asyncio.Event()
        self._changed = asyncio.Condition()

    def tool(self) -> Tool[..., Any]:
        @tool
        async def wait_for_gate() -> str:
            """Wait until the test opens the gate."""
            async with self._changed:
                self.inside += 1
                self._changed.notify_all()
            await self.opened.wait()
            return "through"

        return wait_for_gate

    async def wait_inside(self, count: int) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self.inside >= count), 30)


class RecordingRunRepository(InMemoryRunRepository):
    """Remembers every run stored; yields to the event loop inside `add` as a database round trip
    does (where a race between requests would show); its first `failures` adds find the database down.
    """

    def __init__(self, *, failures: int = 0) -> None:
        super().__init__()
        self.added: list[Run] = []
        self._failures = failures

    async def add(self, run: Run) -> None:
        await asyncio.sleep(0)
        if self._failures > 0:
            self._failures -= 1
            raise StoreUnavailable("PostgreSQL is unavailable (ConnectionRefusedError)")
        await super().add(run)
        self.added.append(run)


class Rig:
    """SubmitRun on in-memory adapters, a scripted model and a gate tool."""

    def __init__(
        self,
        script: list[Any],
        *,
        cap: int | None = None,
        limit_per_min: int = 100,
        runs: RecordingRunRepository | None = None,
    ) -> None:
        self.clock = FixedClock()
        self.runs = runs or RecordingRunRepository()
        self.limit_per_min = limit_per_min
        self.gate = Gate()
        self.limiter = InMemoryRateLimiter(self.clock)
        loop = AgentLoop(
            memory_loop_deps(
                ScriptedLLMClient(script),
                ToolRegistry([self.gate.tool()], default_timeout_s=60),
                runs=self.runs,
                trace=InMemoryTraceSink(),
                sessions=InMemorySessionStore(self.clock),
                clock=self.clock,
                config=AgentConfig(),
            )
        )
        self.events = InMemoryRunEvents()
        self.scheduler = InlineRunScheduler(loop, events=self.events, max_in_flight=cap)
        create = CreateRun(
            runs=self.runs, clock=self.clock, ids=SequentialIdGenerator(), max_steps=5, max_goal_chars=50
        )
        self.submit = SubmitRun(
            create=create,
            scheduler=self.scheduler,
            admission=self.scheduler,
            runs=self.runs,
            events=self.events,
            clock=self.clock,
            limiter=self.limiter,
            limit_per_min=limit_per_min,
        )

    async def post(self, goal: str = "go", *, key: str | None = None, wait_s: float = 0.0) -> SubmitRunResult:
        inp = CreateRunInput(owner=OWNER, goal=goal, idempotency_key=key, request_fingerprint=key and f"fp-{goal}")
        return await self.submit.execute(inp, wait_s=wait_s)

    async def quota_left(self) -> int:
        """Runs the owner may still create this minute (asking counts one, so it is refunded)."""
        decision = await self.limiter.hit(f"runs:{OWNER}", limit=self.limit_per_min, window_s=60)
        if decision.receipt is not None:
            await self.limiter.refund(f"runs:{OWNER}", decision.receipt)
            return decision.remaining + 1
        return 0

    async def finish(self, results: list[SubmitRunResult]) -> list[Run]:
        """Open the gate; the runs as they ended."""
        self.gate.opened.set()
        ended: list[Run] = []
        for result in results:
            waiter = WaitForRun(runs=self.runs, events=self.events, scheduler=self.scheduler, clock=self.clock)
            ended.append(await waiter.execute(result.run.id, OWNER, wait_s=30))
        return ended


async def test_past_the_cap_a_run_is_refused_before_it_is_stored() -> None:
    rig = Rig([GATE, GATE, answer("a"), answer("b")], cap=2)
    held = [await rig.post("one"), await rig.post("two")]
    await rig.gate.wait_inside(2)

    with pytest.raises(Overloaded) as refused:
        await rig.post("three")

    assert refused.value.retry_after_s == 1.0
    assert refused.value.code == "overloaded"
    assert [r.run.goal for r in held] == ["one", "two"]
    assert rig.runs.added == [r.run for r in held]  # the refused run was never stored
    assert [run.status for run in await rig.finish(held)] == [RunStatus.SUCCEEDED] * 2


async def test_a_place_frees_when_a_run_ends_whatever_its_outcome() -> None:
    rig = Rig([GATE, answer("done"), answer("next")], cap=1)
    held = await rig.post("one")
    await rig.gate.wait_inside(1)
    with pytest.raises(Overloaded):
        await rig.post("two")

    (ended,) = await rig.finish([held])
    after = await rig.post("three", wait_s=30)

    assert ended.status is RunStatus.SUCCEEDED
    assert after.run.status is RunStatus.SUCCEEDED
    # a run that fails (here: the model's script has run out) frees its place too
    failed = await rig.post("four", wait_s=30)
    assert failed.run.status is RunStatus.FAILED
    assert (await rig.post("five", wait_s=30)).run.status is RunStatus.FAILED


async def test_concurrent_submissions_never_take_more_places_than_the_cap() -> None:
    rig = Rig([GATE] * 3 + [answer("ok")] * 3, cap=3)

    outcomes = await asyncio.gather(*(rig.post(f"run {i}") for i in range(10)), return_exceptions=True)

    accepted = [o for o in outcomes if isinstance(o, SubmitRunResult)]
    assert len(accepted) == 3
    assert all(isinstance(o, Overloaded) for o in outcomes if o not in accepted)
    assert len(rig.runs.added) == 3
    await rig.gate.wait_inside(3)
    assert {run.status for run in await rig.finish(accepted)} == {RunStatus.SUCCEEDED}


async def test_a_replay_needs_no_place_and_spends_no_quota() -> None:
    rig = Rig([GATE, answer("paid")], cap=1, limit_per_min=2)
    first = await rig.post("pay", key="order-1")
    await rig.gate.wait_inside(1)

    replays = [await rig.post("pay", key="order-1") for _ in range(9)]

    assert {r.run.id for r in replays} == {first.run.id}
    assert all(r.replayed for r in replays)
    assert await rig.quota_left() == 1  # only the first request counted
    await rig.finish([first])


async def test_requests_refused_by_validation_or_by_the_cap_spend_no_quota() -> None:
    rig = Rig([GATE, answer("ok")], cap=1, limit_per_min=3)
    for goal in ["   ", "x" * 51]:
        with pytest.raises(InvalidGoal):
            await rig.post(goal)
    held = await rig.post("hold")
    await rig.gate.wait_inside(1)
    for _ in range(5):
        with pytest.raises(Overloaded):
            await rig.post("too many")

    assert await rig.quota_left() == 2  # the held run is the only one counted
    await rig.finish([held])


async def test_past_the_quota_a_run_is_refused_and_its_place_given_back() -> None:
    rig = Rig([answer("a"), answer("b"), answer("c")], cap=1, limit_per_min=2)
    done = [await rig.post(wait_s=30), await rig.post(wait_s=30)]

    with pytest.raises(RateLimited) as limited:
        await rig.post()

    assert [r.run.status for r in done] == [RunStatus.SUCCEEDED] * 2
    assert 59 < limited.value.retry_after_s <= 60
    rig.clock.advance(60)
    # the refused request kept neither the only place nor any quota
    assert (await rig.post(wait_s=30)).run.status is RunStatus.SUCCEEDED


async def test_a_run_the_store_could_not_take_gives_back_its_place_and_its_quota() -> None:
    rig = Rig([answer("stored at last")], cap=1, limit_per_min=2, runs=RecordingRunRepository(failures=4))

    for _ in range(4):
        with pytest.raises(StoreUnavailable):
            await rig.post()
    stored = await rig.post(wait_s=30)

    assert stored.run.status is RunStatus.SUCCEEDED  # the only place was free again
    assert await rig.quota_left() == 1  # and only the stored run was counted


async def test_the_losers_of_an_idempotency_race_get_the_winners_run_and_their_quota_back() -> None:
    rig = Rig([GATE, answer("once")], limit_per_min=5)

    outcomes = await asyncio.gather(*(rig.post("pay", key="k") for _ in range(3)))

    assert len({o.run.id for o in outcomes}) == 1  # as a later retry would: the first run, replayed
    assert [o.replayed for o in outcomes].count(False) == 1
    assert len(rig.runs.added) == 1
    assert await rig.quota_left() == 4
    await rig.gate.wait_inside(1)
    await rig.finish([o for o in outcomes if not o.replayed])


async def test_a_racing_request_with_the_same_key_and_another_body_is_refused_as_a_mismatch() -> None:
    rig = Rig([GATE, answer("once")], limit_per_min=5)

    outcomes = await asyncio.gather(rig.post("pay", key="k"), rig.post("refund", key="k"), return_exceptions=True)

    accepted = [o for o in outcomes if isinstance(o, SubmitRunResult)]
    assert len(accepted) == 1
    assert [type(o) for o in outcomes if o not in accepted] == [IdempotencyMismatch]  # a 422, not a 409
    assert await rig.quota_left() == 4
    await rig.gate.wait_inside(1)
    await rig.finish(accepted)
