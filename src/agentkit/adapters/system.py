"""The real clock and id generator."""

import time
import uuid
from datetime import UTC, datetime

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.domain.ids import RunId


class SystemClock(Clock):
    """The machine's UTC wall clock and its monotonic clock."""

    def now(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """A monotonic time in seconds."""
        return time.perf_counter()


class UuidIdGenerator(IdGenerator):
    """Random UUIDv4 run ids."""

    def new_run_id(self) -> RunId:
        """A new random id."""
        return RunId(str(uuid.uuid4()))
