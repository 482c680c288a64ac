"""WaitForRun: long-poll a run until it ends or the wait is over."""

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.waiting import until_ended
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run


class WaitForRun:
    """Read a run of this owner, waiting up to `wait_s` for it to reach a terminal status.

    Rules:
    - It answers the moment the run ends, wherever the run executes (`waiting.until_ended`).
    - Another owner's run is not found.
    - Once the process begins to shut down, the wait ends at once with the run as it stands.
    """

    def __init__(self, *, runs: RunRepository, events: RunEvents, scheduler: RunScheduler, clock: Clock) -> None:
        self._runs = runs
        self._events = events
        self._scheduler = scheduler
        self._clock = clock

    async def execute(self, run_id: RunId, owner: OwnerId | None, *, wait_s: float) -> Run:
        """The run once it ended, or as it stands when the wait is over."""
        return await until_ended(
            run_id,
            owner,
            wait_s=wait_s,
            runs=self._runs,
            events=self._events,
            scheduler=self._scheduler,
            clock=self._clock,
        )
