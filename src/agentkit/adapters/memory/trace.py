"""In-memory trace sinks: one that keeps steps, one that always fails (to prove runs survive it)."""

from collections import defaultdict

from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.domain.ids import RunId
from agentkit.domain.steps import Step


class InMemoryTraceSink(TraceSink, TraceReader):
    """Keeps every step in memory, grouped by run."""

    def __init__(self) -> None:
        self._steps: defaultdict[RunId, list[Step]] = defaultdict(list)

    async def record(self, step: Step) -> None:
        """Keep the step."""
        self._steps[step.run_id].append(step)

    async def flush(self) -> None:
        """Nothing waits: steps are kept as they come."""

    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps by step number."""
        return sorted(self._steps.get(run_id, ()), key=lambda step: step.step_no)


class FailingTraceSink(TraceSink):
    """A sink whose every write fails, as a database that is down would."""

    def __init__(self, message: str = "trace store is down") -> None:
        self._message = message
        self.attempts = 0

    async def record(self, step: Step) -> None:
        """Fail."""
        self.attempts += 1
        raise ConnectionError(self._message)

    async def flush(self) -> None:
        """Fail, as the store is down."""
        raise ConnectionError(self._message)
