"""Who may see a run: its owner, or an admin (owner None). The one place that rule is written."""

from agentkit.application.errors import RunNotFound
from agentkit.application.ports.run_repository import RunRepository
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run


async def load_owned(runs: RunRepository, run_id: RunId, owner: OwnerId | None) -> Run:
    """The run with this id if `owner` may see it; `owner=None` (the admin CLI) sees every run.

    Another owner's run is reported as not found, never as forbidden, so ids reveal nothing.

    Raises:
        RunNotFound: no such run, or it belongs to someone else.
    """
    run = await runs.get(run_id)
    if run is None or (owner is not None and run.owner != owner):
        raise RunNotFound(f"no run with id {run_id!r}")
    return run
