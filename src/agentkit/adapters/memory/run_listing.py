"""The in-memory RunListing, over an InMemoryRunRepository's runs."""

from agentkit.adapters.memory.runs import InMemoryRunRepository
from agentkit.application.ports.run_listing import RunCursor, RunFilter, RunListing
from agentkit.domain.run import Run


class InMemoryRunListing(RunListing):
    """Sorts the repository's runs by (created_at, id) descending and takes a page, as the Postgres one does."""

    def __init__(self, repository: InMemoryRunRepository) -> None:
        self._repository = repository

    async def list_runs(self, where: RunFilter, *, after: RunCursor | None, limit: int) -> list[Run]:
        """At most `limit` runs matching `where`, newest first, older than `after`."""
        found = [run for run in self._repository.all_runs() if _matches(run, where, after)]
        found.sort(key=lambda run: (run.created_at, run.id), reverse=True)
        return found[:limit]


def _matches(run: Run, where: RunFilter, after: RunCursor | None) -> bool:
    return (
        (where.owner is None or run.owner == where.owner)
        and (not where.statuses or run.status in where.statuses)
        and (where.session_id is None or run.session_id == where.session_id)
        and (where.parent_run_id is None or run.parent_run_id == where.parent_run_id)
        and (where.agent is None or run.agent == where.agent)
        and (where.created_before is None or run.created_at < where.created_before)
        and (where.created_after is None or run.created_at >= where.created_after)
        and (after is None or (run.created_at, run.id) < (after.created_at, after.id))
    )
