"""RunAgent: create a run and execute it to the end, in this process (CLI and library use)."""

import msgspec

from agentkit.application.agent.loop import AgentLoop
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_tree import RunTree
from agentkit.application.runs.waiting import until_ended
from agentkit.domain.run import Run, RunStatus


class TreeWaiting(msgspec.Struct, frozen=True, kw_only=True):
    """What a run that calls other agents needs to go on outside the HTTP API: its child runs are handed
    to the scheduler like any run, and the caller waits for the parent's end.

    Attributes:
        tree: Starts the children and resumes the parent when they end.
        scheduler: Executes the children (tasks of this process, or queue workers).
        runs: Where the parent is read.
        events: Where its end is heard.
        clock: Time.
        wait_s: How long to wait for the tree at most (the run as it stands then is returned).
    """

    tree: RunTree
    scheduler: RunScheduler
    runs: RunRepository
    events: RunEvents
    clock: Clock
    wait_s: float


class RunAgent:
    """Create a run and execute it right away; return it in its terminal status.

    Rules:
    - The run is stored as pending first, so even a run that fails at once is on record.
    - Errors in the input (empty goal, bad schema) raise before anything runs.
    - A run that calls other agents waits on their child runs: with `waiting` given, they are handed
      to the scheduler and the run is returned once it ended (or the wait is over).
    """

    def __init__(self, *, create: CreateRun, loop: AgentLoop, waiting: TreeWaiting | None = None) -> None:
        self._create = create
        self._loop = loop
        self._waiting = waiting

    async def execute(self, inp: CreateRunInput) -> Run:
        """Run the agent on the goal and return the finished run."""
        created = await self._create.execute(inp)
        if created.replayed or created.run.is_terminal:
            return created.run
        execution = self._loop.run(created.run)
        del created  # the pending version need not live as long as the run
        ended = await execution
        waiting = self._waiting
        if ended.status is not RunStatus.WAITING or waiting is None:
            return ended
        await waiting.tree.settle(ended, waiting.scheduler)
        return await until_ended(
            ended.id,
            None,
            wait_s=waiting.wait_s,
            runs=waiting.runs,
            events=waiting.events,
            scheduler=waiting.scheduler,
            clock=waiting.clock,
        )
