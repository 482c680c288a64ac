"""RunEventFeed: the observer that writes each run's status changes and steps to the run event log."""

import msgspec

from agentkit.application.ports.run_event_log import (
    ChildDeltaEvent,
    ChildEvent,
    DeltaEvent,
    RunEventLog,
    StatusEvent,
    StepEvent,
)
from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, Step

# Child runs in progress whose parents this process remembers, the oldest forgotten first beyond it (a
# forgotten one's fragments are not copied to its parent's log, its statuses still are)
_MAX_CHILDREN = 10_000


class RunEventFeed(RunObserver):
    """Tells the event log of every status change and every step, as the observers hear of them.

    The observers hear of a stored run when what they watch of it changed (its status, attempt,
    cancel request or pauses: see ObservedRunRepository). A step is logged as the trace endpoint
    shows it, without the prompt messages it first sent (the trace's `?include=prompts` has those).
    """

    def __init__(self, log: RunEventLog) -> None:
        self._log = log
        # the parents of the child runs in progress here: their fragments go to the parent's log too
        self._parents: dict[RunId, RunId] = {}

    def on_run(self, run: Run) -> None:
        """Log the run as stored; a child run's status goes to its parent's log too."""
        self._log.append(run.id, StatusEvent(run=run))
        parent = run.parent_run_id
        if parent is not None:
            self._log.append(parent, ChildEvent(run=run))
            if run.is_terminal:
                self._parents.pop(run.id, None)
            elif run.id not in self._parents:
                if len(self._parents) >= _MAX_CHILDREN:
                    # the oldest goes: a child whose end was stored by another process is never popped here
                    del self._parents[next(iter(self._parents))]
                self._parents[run.id] = parent

    def on_step(self, step: Step) -> None:
        """Log the step."""
        if isinstance(step, LLMStep) and (step.sent is not None or step.provider_data is not None):
            step = msgspec.structs.replace(step, sent=None, provider_data=None)
        self._log.append(step.run_id, StepEvent(step=step))

    def on_delta(self, run_id: RunId, delta: DeltaEvent) -> None:
        """Log the fragment (the log drops it once the step it belongs to is logged); a child's goes to its
        parent's log too."""
        self._log.append(run_id, delta)
        if self._parents:  # most processes execute no child run: no lookup
            parent = self._parents.get(run_id)
            if parent is not None:
                self._log.append(parent, ChildDeltaEvent(run_id=run_id, delta=delta))
