"""RunTree: start the child runs a waiting run's calls ask for, and hand each child's end to its parent."""

import asyncio
from collections.abc import Callable
from datetime import timedelta

import msgspec
import structlog

from agentkit.application.agent.agent_tools import task_of
from agentkit.application.agents.catalog import AgentCatalog
from agentkit.application.errors import ApplicationError
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.domain import run as runs
from agentkit.domain import tree
from agentkit.domain.actions import ActionKind, PendingCall
from agentkit.domain.errors import ActionRefused, DomainError, IllegalTransition
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus, validate_goal

logger = structlog.get_logger(__name__)

# Answers to one parent given at once (siblings ending together) each retry the compare-and-set this often.
_TRIES = 8


class TreeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The limits a child run is made with.

    Attributes:
        max_depth: How many levels below its root a tree may grow.
        max_steps: The service's MAX_STEPS.
        token_budget: The service's RUN_TOKEN_BUDGET, if any.
        max_goal_chars: The longest task a child run takes (MAX_GOAL_CHARS).
        pending_lease_s: How long a child may wait for an executor before the sweeper starts it.
        recheck_s: How often the sweeper looks at a waiting run's children.
    """

    max_depth: int = 3
    max_steps: int = 10
    token_budget: int | None = None
    max_goal_chars: int = 20_000
    pending_lease_s: float = 30.0
    recheck_s: float = 30.0


class RunTree:
    """The links between a run and its child runs.

    Rules:
    - A run that called other agents waits (`waiting`) holding no executor. Once it is stored so,
      each call becomes a child run: the task is its goal, the callee its agent, the owner the
      parent's, `parent_run_id`, the call and its step link it. Its id follows from the parent and
      the call, so a call never starts two children. The child is handed to the scheduler like any
      run (a task here, or a queue worker).
    - A call the tree's limits refuse (too deep, a cycle, a budget its tree has spent, a task that is
      no goal) starts nothing: its answer is the refusal, which the model reads as a tool error.
    - A child's limits are its agent's, and never more than its parent has left: at most the
      parent's max_steps, and the tokens and dollars the parent's budgets leave after what it and
      its ended children spent.
    - A child's end answers its call (its answer or typed output; how it failed) and its usage joins
      the parent's; the last answer puts the parent back to `running`, handed to the scheduler.
    - Should an end not reach its parent (its executor died between the two writes), the sweeper
      finds the parent waiting past its check time and `recheck`s it: children that ended answer,
      missing ones are started.
    """

    def __init__(self, *, runs: RunRepository, clock: Clock, agents: AgentCatalog, limits: TreeLimits) -> None:
        self._runs = runs
        self._clock = clock
        self._agents = agents
        self._limits = limits

    async def settle(self, run: Run, scheduler: RunScheduler) -> None:
        """After `run` was stored: start the children it waits on, or pass its end to its parent."""
        try:
            if run.action is not None and run.status in (RunStatus.WAITING, RunStatus.REQUIRES_ACTION):
                await self._start_children(run, scheduler, fresh=True)
            elif run.is_terminal and run.parent_run_id is not None:
                await self._answer(run.parent_run_id, scheduler, _answer_with(run, self._clock))
        except ApplicationError as exc:  # an outage: the sweeper's recheck does it later
            logger.warning("run_tree_deferred", run_id=run.id, error=str(exc))
        except Exception:
            # never the executor's failure: the run is stored; the sweeper's recheck settles its tree
            logger.exception("run_tree_failed", run_id=run.id)

    async def recheck(self, run: Run, scheduler: RunScheduler) -> None:
        """A waiting run past its check time: settle what its children did, and look again later."""
        try:
            await self._start_children(run, scheduler, fresh=False)
        except ApplicationError as exc:
            logger.warning("run_tree_deferred", run_id=run.id, error=str(exc))
            return
        now = self._clock.now()
        until = now + timedelta(seconds=self._limits.recheck_s)
        await self._answer(run.id, scheduler, lambda parent: runs.recheck_waiting(parent, until=until))

    async def _start_children(self, parent: Run, scheduler: RunScheduler, *, fresh: bool) -> None:
        """Start the children the parent's calls ask for (`fresh`: it has just paused, so none exists yet)."""
        assert parent.action is not None  # noqa: S101 - the caller checked
        calls = [
            call
            for call in parent.action.calls
            if call.kind is ActionKind.CHILD_RUN and call.answer is None and call.child_run_id is not None
        ]
        # the calls of a turn start their children at once: each is handed over as soon as it is stored
        answers = await asyncio.gather(*(self._start_child(parent, call, scheduler, fresh=fresh) for call in calls))
        for answer in answers:
            if answer is not None:
                await self._answer(parent.id, scheduler, answer)

    async def _start_child(
        self, parent: Run, call: PendingCall, scheduler: RunScheduler, *, fresh: bool
    ) -> Callable[[Run], Run] | None:
        """Store the call's child run and hand it over; or the answer the call already has (a refusal, an end).

        Children are made only once their parent is stored waiting, and a waiting parent goes on only
        once every child ended: a parent that has just paused has none yet, so it is not read first
        (the sweeper's recheck of a parent whose children may exist reads them).
        """
        assert call.child_run_id is not None  # noqa: S101 - the caller checked
        child = None if fresh else await self._runs.get(call.child_run_id)
        if child is not None and child.is_terminal:
            return _answer_with(child, self._clock)
        if child is None:
            made = self._child(parent, call)
            if isinstance(made, str):
                logger.info("child_run_refused", run_id=parent.id, call_id=call.call_id, reason=made)
                return _refusal(call.child_run_id, made, self._clock)
            await self._runs.add(made)
            logger.info("child_run_created", run_id=parent.id, child_run_id=made.id, agent=made.agent)
            child = made
        if child.status is RunStatus.PENDING:  # made before, perhaps never handed over: handing it again is harmless
            try:
                await scheduler.submit(child)
            except ApplicationError:
                logger.info("child_run_submit_deferred", child_run_id=child.id)  # the sweeper starts it
        return None

    def _child(self, parent: Run, call: PendingCall) -> Run | str:
        """The child run a call starts, or why it starts none."""
        assert call.agent is not None  # noqa: S101 - a child call names its agent
        assert call.child_run_id is not None  # noqa: S101 - and its child
        limits = self._limits
        refusal = tree.child_refusal(parent, call.agent, max_depth=limits.max_depth)
        if refusal is not None:
            return refusal
        task = task_of(call.arguments)
        if task is None:
            return "refused: the call gives the agent no `task` (a string)"
        try:
            goal = validate_goal(task, max_chars=limits.max_goal_chars)
            agent = self._agents.require(call.agent)
        except (DomainError, ApplicationError) as exc:
            return f"refused: {exc}"
        now = self._clock.now()
        cost = tree.cost_left(parent)
        return Run(
            id=call.child_run_id,
            owner=parent.owner,
            goal=goal,
            output_schema=agent.output_schema,
            max_steps=min(agent.max_steps, limits.max_steps, tree.steps_left(parent)),
            token_budget=tree.lower(tree.lower(agent.token_budget, limits.token_budget), tree.tokens_left(parent)),
            cost_budget=cost,
            created_at=now,
            expires_at=now + timedelta(seconds=limits.pending_lease_s),
            agent=agent.name,
            agent_version=agent.version,
            stream=parent.stream,
            parent_run_id=parent.id,
            parent_call_id=call.call_id,
            parent_step_no=None if parent.action is None else parent.action.turn_step,
            lineage=tree.path_of(parent),
        )

    async def _answer(self, parent_id: RunId, scheduler: RunScheduler, change: Callable[[Run], Run]) -> None:
        """Apply `change` to the waiting parent by compare-and-set; hand it to the scheduler once it runs again."""
        for _ in range(_TRIES):
            parent = await self._runs.get(parent_id)
            if parent is None or parent.action is None:
                return
            try:
                changed = change(parent)
            except (IllegalTransition, ActionRefused):
                return  # it no longer waits on this (answered already, cancelled, ended)
            if not await self._runs.save_answer(changed, expected=parent.action):
                continue  # a sibling's end came first: look again
            if changed.status is RunStatus.RUNNING:
                logger.info("run_children_done", run_id=parent_id)
                try:
                    taken = await scheduler.resume(changed)
                except ApplicationError:
                    taken = False
                if not taken:
                    logger.info("run_resume_deferred", run_id=parent_id)  # its lease lapsed: the next sweep
            return
        logger.warning("run_tree_answer_contended", run_id=parent_id)


def _answer_with(child: Run, clock: Clock) -> Callable[[Run], Run]:
    return lambda parent: runs.settle_child(parent, child, now=clock.now())


def _refusal(child_run_id: RunId, reason: str, clock: Clock) -> Callable[[Run], Run]:
    return lambda parent: runs.refuse_child(parent, child_run_id, reason, now=clock.now())
