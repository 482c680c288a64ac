"""RunTree: children started once, ends passed on, the sweeper's recheck of a lost end; a handoff resumed."""

from datetime import UTC, datetime, timedelta

import msgspec

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import FixedClock, InMemoryRunRepository, InMemoryTraceSink
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.agent.deps import AgentChooser, LoopDeps
from agentkit.application.agents.catalog import AgentCatalog, AgentSetup
from agentkit.application.agents.profile import AgentProfile
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.recover_runs import RecoverLapsedRuns
from agentkit.application.runs.run_tree import RunTree, TreeLimits
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain import run as runs
from agentkit.domain.actions import ActionKind, Decision, PendingCall, call_digest
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from agentkit.domain.tools import ToolResult

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
CHILD = RunId("00000000-0000-0000-0000-00000000c001")


class RecordingScheduler(RunScheduler):
    """Records what it was handed; executes nothing."""

    def __init__(self) -> None:
        self.submitted: list[RunId] = []
        self.resumed: list[RunId] = []

    async def start(self) -> None:
        """Nothing to start."""

    async def submit(self, run: Run) -> None:
        """Record the run."""
        self.submitted.append(run.id)

    async def resume(self, run: Run) -> bool:
        """Record the run."""
        self.resumed.append(run.id)
        return True

    async def notify_cancel(self, run_id: RunId) -> None:
        """Nothing to tell."""

    @property
    def accepting(self) -> bool:
        """Always."""
        return True

    def begin_shutdown(self, grace_s: float) -> None:
        """Nothing to stop."""

    async def shutdown(self, grace_s: float) -> None:
        """Nothing to stop."""


def tree(repository: InMemoryRunRepository, clock: FixedClock) -> RunTree:
    llm = ScriptedLLMClient([])
    setups = {
        name: AgentSetup(
            name=name,
            profile=AgentProfile(),
            version=f"v-{name}",
            llm=llm,
            tools=ToolRegistry(),
            config=AgentConfig(),
            max_steps=8,
            token_budget=None,
        )
        for name in ("default", "math")
    }
    return RunTree(runs=repository, clock=clock, agents=AgentCatalog(setups), limits=TreeLimits(recheck_s=30))


def waiting_parent() -> Run:
    call = PendingCall(
        call_id=ToolCallId("c1"),
        name="ask_math",
        arguments={"task": "add 2 and 3"},
        digest=call_digest("ask_math", {"task": "add 2 and 3"}),
        kind=ActionKind.CHILD_RUN,
        child_run_id=CHILD,
        agent="math",
    )
    parent = Run(id=RunId("00000000-0000-0000-0000-0000000000a1"), owner=OwnerId("o"), goal="2+3?", created_at=T0)
    started = runs.start(parent, now=T0, lease_until=T0 + timedelta(seconds=30))
    return runs.pause(started, (call,), now=T0, until=T0 + timedelta(seconds=30), turn_step=1)


async def test_a_paused_parent_starts_its_child_linked_and_limited_and_its_end_resumes_the_parent() -> None:
    repository, clock, scheduler = InMemoryRunRepository(), FixedClock(T0), RecordingScheduler()
    parent = msgspec.structs.replace(waiting_parent(), max_steps=5, token_budget=100, input_tokens=30)
    await repository.add(parent)
    links = tree(repository, clock)

    await links.settle(parent, scheduler)
    child = await repository.get(CHILD)

    assert child is not None
    assert scheduler.submitted == [CHILD]
    assert (child.goal, child.agent, child.agent_version, child.owner) == ("add 2 and 3", "math", "v-math", "o")
    assert (child.parent_run_id, child.parent_call_id, child.parent_step_no, child.lineage) == (
        parent.id,
        "c1",
        1,
        ("default",),
    )
    assert (child.max_steps, child.token_budget) == (5, 70)  # at most what the parent has left
    done = runs.succeed(runs.start(child, now=T0, lease_until=T0), now=T0, answer="5")
    await repository.save(done)
    await links.settle(done, scheduler)
    resumed = await repository.get(parent.id)
    assert resumed is not None
    assert resumed.status is RunStatus.RUNNING
    assert scheduler.resumed == [parent.id]


async def test_the_sweeper_passes_on_an_end_that_never_reached_the_parent() -> None:
    repository, clock, scheduler = InMemoryRunRepository(), FixedClock(T0), RecordingScheduler()
    parent = waiting_parent()
    await repository.add(parent)
    links = tree(repository, clock)
    await links.settle(parent, scheduler)
    child = await repository.get(CHILD)
    assert child is not None
    # the child ended, but its executor died before it told the parent
    await repository.save(runs.succeed(runs.start(child, now=T0, lease_until=T0), now=T0, answer="5"))
    sweep = RecoverLapsedRuns(runs=repository, scheduler=scheduler, clock=clock, max_attempts=3, tree=links)

    await sweep.execute()  # not yet: the parent's check time has not come
    clock.advance(31)
    await sweep.execute()

    stored = await repository.get(parent.id)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING
    assert stored.action is not None
    answer = stored.action.answer_of(ToolCallId("c1"))
    assert answer is not None
    assert (answer.decision, answer.output) == (Decision.OUTPUT, "5")
    assert parent.id in scheduler.resumed


async def test_the_sweeper_starts_a_child_never_made_and_looks_again_later() -> None:
    repository, clock, scheduler = InMemoryRunRepository(), FixedClock(T0), RecordingScheduler()
    parent = waiting_parent()
    await repository.add(parent)  # stored waiting; the process died before it made the child
    sweep = RecoverLapsedRuns(
        runs=repository, scheduler=scheduler, clock=clock, max_attempts=3, tree=tree(repository, clock)
    )

    clock.advance(31)
    await sweep.execute()

    stored = await repository.get(parent.id)
    assert stored is not None
    assert stored.status is RunStatus.WAITING
    assert stored.expires_at == T0 + timedelta(seconds=61)  # looked at again a check later
    assert await repository.get(CHILD) is not None
    assert CHILD in scheduler.submitted


class TwoAgents(AgentChooser):
    """`frontdesk` (the deps it is given) and `billing` (its own instructions and model)."""

    def __init__(self, billing: LoopDeps) -> None:
        self._billing = billing

    def deps_for(self, base: LoopDeps, name: str) -> LoopDeps:
        return self._billing if name == "billing" else base

    def version_of(self, name: str) -> str | None:
        return f"v-{name}"


async def test_a_run_whose_handoff_was_stored_but_not_the_run_resumes_as_the_agent_it_was_handed_to() -> None:
    clock = FixedClock(T0)
    repository, trace = InMemoryRunRepository(), InMemoryTraceSink()
    frontdesk_llm, billing_llm = ScriptedLLMClient([]), ScriptedLLMClient([LLMResponse(text="billing here")])
    frontdesk = memory_loop_deps(frontdesk_llm, runs=repository, trace=trace, clock=clock)
    billing = frontdesk.for_agent(
        llm=billing_llm, tools=ToolRegistry(), config=AgentConfig(system_prompt="You are billing.")
    )
    handoff = ToolCall(id=ToolCallId("h1"), name="transfer_to_billing", arguments={})
    run_id = RunId("00000000-0000-0000-0000-0000000000b1")
    await trace.record(
        LLMStep(run_id=run_id, step_no=1, created_at=T0, latency_ms=1, tool_calls=(handoff,), agent="frontdesk")
    )
    await trace.record(
        ToolStep(
            run_id=run_id,
            step_no=2,
            created_at=T0,
            latency_ms=1,
            call_id=handoff.id,
            tool_name=handoff.name,
            arguments={},
            result=ToolResult(ok=True, output="Handed off from 'frontdesk' to 'billing'."),
        )
    )
    # its executor died after the handoff's step was stored, before the run was saved as billing's
    pending = Run(id=run_id, owner=OwnerId("o"), goal="refund?", created_at=T0, agent="frontdesk")
    lapsed = runs.start(pending, now=T0, lease_until=T0)
    await repository.add(lapsed)
    clock.advance(1)

    ended = await AgentLoop(frontdesk, agents=TwoAgents(billing)).run(lapsed)

    assert (ended.status, ended.answer, ended.agent, ended.agent_version) == (
        RunStatus.SUCCEEDED,
        "billing here",
        "billing",
        "v-billing",
    )
    [(messages, _)] = billing_llm.requests
    assert "You are billing." in (messages[0].content or "")
    assert frontdesk_llm.requests == []
