"""RunObservers: several observers as one; one that raises is logged and the others still hear."""

from collections.abc import Sequence

import structlog

from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import Step

logger = structlog.get_logger(__name__)


class RunObservers(RunObserver):
    """Hands each event to every observer, in order; failures are logged, never raised."""

    def __init__(self, observers: Sequence[RunObserver]) -> None:
        self.observers = tuple(observers)
        # fragments go to the observers that want them only (the event log): there are many of them
        self._fragment_observers = tuple(
            observer for observer in self.observers if type(observer).on_delta is not RunObserver.on_delta
        )

    def on_run(self, run: Run) -> None:
        """Tell every observer."""
        for observer in self.observers:
            try:
                observer.on_run(run)
            except Exception as exc:
                logger.warning("observer_failed", observer=type(observer).__name__, error=str(exc)[:200])

    def on_step(self, step: Step) -> None:
        """Tell every observer."""
        for observer in self.observers:
            try:
                observer.on_step(step)
            except Exception as exc:
                logger.warning("observer_failed", observer=type(observer).__name__, error=str(exc)[:200])

    def on_delta(self, run_id: RunId, delta: DeltaEvent) -> None:
        """Tell the observers that take fragments."""
        for observer in self._fragment_observers:
            try:
                observer.on_delta(run_id, delta)
            except Exception as exc:
                logger.warning("observer_failed", observer=type(observer).__name__, error=str(exc)[:200])
