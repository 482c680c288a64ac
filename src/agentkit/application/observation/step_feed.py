"""ObserverStepSink: the loop's steps to the run observers, as one more trace observer."""

from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.domain.steps import Step


class ObserverStepSink(TraceSink):
    """A TraceSink observer (see LoopDeps.observers) that tells the run observers of each step."""

    def __init__(self, observer: RunObserver) -> None:
        self._observer = observer

    async def record(self, step: Step) -> None:
        """Tell the observers (synchronously: they only count and queue)."""
        self._observer.on_step(step)

    async def flush(self) -> None:
        """Nothing is held here."""
