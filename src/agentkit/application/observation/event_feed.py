"""RunEventFeed: the observer that writes each run's status changes and steps to the run event log."""

import msgspec

from agentkit.application.ports.run_event_log import RunEventLog, StatusEvent, StepEvent
from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, Step

# Runs whose last logged state this process remembers; past it the oldest are forgotten.
_REMEMBERED = 10_000


class RunEventFeed(RunObserver):
    """Tells the event log of every status change and every step, as the observers hear of them.

    The repository is observed on every write (usage, heartbeat bookkeeping, calls in progress), so
    a run is logged only when what a follower sees of it changed: its status, its attempt (another
    executor resumed it) or its cancel request. A step is logged as the trace endpoint shows it,
    without the prompt messages it first sent (the trace's `?include=prompts` has those).
    """

    def __init__(self, log: RunEventLog) -> None:
        self._log = log
        self._seen: dict[RunId, tuple[str, int, bool]] = {}

    def on_run(self, run: Run) -> None:
        """Log the run if its status, attempt or cancel request changed."""
        mark = (run.status.value, run.attempt, run.cancel_requested)
        seen = self._seen
        if seen.get(run.id) == mark:
            return
        seen[run.id] = mark  # an ended run too: one saved again unchanged is not logged twice
        if len(seen) > _REMEMBERED:
            del seen[next(iter(seen))]
        self._log.append(run.id, StatusEvent(run=run))

    def on_step(self, step: Step) -> None:
        """Log the step."""
        if isinstance(step, LLMStep) and (step.sent is not None or step.provider_data is not None):
            step = msgspec.structs.replace(step, sent=None, provider_data=None)
        self._log.append(step.run_id, StepEvent(step=step))
