"""A clock that moves only when told, and ids that count up: deterministic tests."""

from datetime import UTC, datetime, timedelta

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.domain.ids import RunId


class FixedClock(Clock):
    """A clock standing at a given time until `advance` moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0

    def now(self) -> datetime:
        """The clock's current time."""
        return self._now

    def monotonic(self) -> float:
        """Seconds advanced so far."""
        return self._mono

    def advance(self, seconds: float) -> None:
        """Move both clocks forward."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds


class SequentialIdGenerator(IdGenerator):
    """Ids `run-1`, `run-2`, ... (with an optional prefix)."""

    def __init__(self, prefix: str = "run") -> None:
        self._prefix = prefix
        self._next = 0

    def new_run_id(self) -> RunId:
        """The next id in sequence."""
        self._next += 1
        return RunId(f"{self._prefix}-{self._next}")
