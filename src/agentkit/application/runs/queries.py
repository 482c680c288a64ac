"""Read use-cases: a run and its trace, visible only to the run's owner."""

import msgspec

from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.trace_sink import TraceReader
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import RunPrompts, Step


class GetRun:
    """Read one run. Another owner's run is reported as not found, never as forbidden."""

    def __init__(self, *, runs: RunRepository) -> None:
        self._runs = runs

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> Run:
        """The run; `owner=None` (admin CLI) reads any run."""
        return await load_owned(self._runs, run_id, owner)


class GetTrace:
    """Read a run's steps in order, for its owner; with prompts, also what its LLM calls sent."""

    def __init__(self, *, runs: RunRepository, trace: TraceReader, prompts: PromptReader | None = None) -> None:
        self._runs = runs
        self._trace = trace
        self._prompts = prompts

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> tuple[Run, list[Step]]:
        """The run and its steps by step number."""
        run = await load_owned(self._runs, run_id, owner)
        return run, await self._trace.steps(run_id)

    async def with_prompts(self, run_id: RunId, owner: OwnerId | None) -> tuple[Run, list[Step], RunPrompts]:
        """The run, its steps, and the messages and tool sets its LLM steps refer to."""
        run, steps = await self.execute(run_id, owner)
        prompts = RunPrompts() if self._prompts is None else await self._prompts.prompts(run_id)
        return run, steps, prompts


class GetChildren:
    """The child runs of a run (the runs its calls of other agents started), oldest first."""

    def __init__(self, *, runs: RunRepository) -> None:
        self._runs = runs

    async def execute(self, run: Run) -> list[Run] | None:
        """The run's children; None for a run that never paused (it started none), at no cost of a read."""
        if not run.pauses:
            return None
        return await self._runs.children(run.id)


class RunTreeNode(msgspec.Struct, frozen=True, kw_only=True):
    """A run, its steps and its child runs' nodes (the runs its calls of other agents started)."""

    run: Run
    steps: list[Step]
    children: list["RunTreeNode"]


class GetRunTree:
    """Read a run with its steps and, below it, each child run's (and theirs), for its owner."""

    def __init__(self, *, runs: RunRepository, trace: TraceReader) -> None:
        self._runs = runs
        self._trace = trace

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> RunTreeNode:
        """The tree of runs below this one (a tree's depth is bounded by AGENT_TREE_MAX_DEPTH)."""
        return await self._node(await load_owned(self._runs, run_id, owner))

    async def _node(self, run: Run) -> RunTreeNode:
        children = await self._runs.children(run.id) if run.pauses else []
        return RunTreeNode(
            run=run,
            steps=await self._trace.steps(run.id),
            children=[await self._node(child) for child in children],
        )
