"""Read use-cases: a run and its trace, visible only to the run's owner."""

from agentkit.application.errors import RunNotFound
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.trace_sink import TraceReader
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import Step


class GetRun:
    """Read one run. Another owner's run is reported as not found, never as forbidden."""

    def __init__(self, *, runs: RunRepository) -> None:
        self._runs = runs

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> Run:
        """The run; `owner=None` (admin CLI) reads any run."""
        run = await self._runs.get(run_id)
        if run is None or (owner is not None and run.owner != owner):
            raise RunNotFound(f"no run with id {run_id!r}")
        return run


class GetTrace:
    """Read a run's steps in order, for its owner."""

    def __init__(self, *, runs: RunRepository, trace: TraceReader) -> None:
        self._get_run = GetRun(runs=runs)
        self._trace = trace

    async def execute(self, run_id: RunId, owner: OwnerId | None) -> tuple[Run, list[Step]]:
        """The run and its steps by step number."""
        run = await self._get_run.execute(run_id, owner)
        return run, await self._trace.steps(run_id)
