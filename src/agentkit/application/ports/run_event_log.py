"""The RunEventLog port: each run's status changes and steps, in order, for clients that follow it live."""

import re
from abc import abstractmethod
from typing import Literal, NewType, Protocol

import msgspec

from agentkit.domain.ids import RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import Step

# `<milliseconds>-<sequence>`, as Redis Streams number their entries; ids of one run's log only grow.
EventId = NewType("EventId", str)
EVENT_ID_PATTERN = "([0-9]{1,20})-([0-9]{1,20})"
"""An event id as the log writes it (a Redis stream id): two numbers joined by a dash."""
_EVENT_ID = re.compile(rf"^{EVENT_ID_PATTERN}\Z")


class StatusEvent(msgspec.Struct, frozen=True, kw_only=True, tag="status"):
    """The run as it was stored when its status (or attempt, or cancel request) changed."""

    run: Run


class StepEvent(msgspec.Struct, frozen=True, kw_only=True, tag="step"):
    """A step of the run, as the trace stores it."""

    step: Step


DeltaKind = Literal["text", "tool_call", "retry"]


class DeltaEvent(msgspec.Struct, frozen=True, kw_only=True, tag="delta", gc=False):
    """A fragment of an LLM step while the model writes it (the stored step, once recorded, has it all).

    Attributes:
        step_no: The LLM step being written.
        kind: `text` (the answer), `tool_call` (a piece of a call's arguments JSON), or `retry`: the
            run was resumed and asks the model again; fragments of `step_no` before this are void.
        index: The call's place in the turn (`tool_call`); 0 otherwise.
        text: The fragment (several of the model's, joined, when they came together).
        call_id: The call's id, on its first fragment.
        name: The tool's name, on the call's first fragment.
    """

    step_no: int
    kind: DeltaKind
    index: int = 0
    text: str = ""
    call_id: str | None = None
    name: str | None = None


class ChildEvent(msgspec.Struct, frozen=True, kw_only=True, tag="child"):
    """A child run of the run (an agent it called) as stored when its status changed: the parent's
    followers see its children start and end."""

    run: Run


class ChildDeltaEvent(msgspec.Struct, frozen=True, kw_only=True, tag="child_delta", gc=False):
    """A fragment of a child run's LLM step while its model writes it (the child's `step`, once stored,
    has it all: fetch the child's trace)."""

    run_id: RunId
    delta: DeltaEvent


RunEvent = StatusEvent | StepEvent | DeltaEvent | ChildEvent | ChildDeltaEvent


class LoggedEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event with its id in the run's log."""

    id: EventId
    event: RunEvent


def event_key(text: str) -> tuple[int, int] | None:
    """The id as numbers that order like the log (None: not an event id)."""
    found = _EVENT_ID.match(text)
    return None if found is None else (int(found[1]), int(found[2]))


class RunEventLog(Protocol):
    """An append-only log of events per run, readable by every process of the service.

    Fragments (`DeltaEvent`) are the one exception to append-only: once the step they belong to is
    logged, they are dropped (the step has the whole text); a reader past them meets the step.

    Appends are fire-and-forget: the loop never waits for the log, and an append the log cannot take
    (its store is down) is dropped and logged. The stored run and trace stay the truth; readers make
    up for a gap with the stored run (`application.runs.follow_run`). A run's log is kept a while
    after its last event, then forgotten.
    """

    @abstractmethod
    def append(self, run_id: RunId, event: RunEvent) -> None:
        """Add the event at the end of the run's log; returns at once and never raises."""

    @abstractmethod
    async def read(
        self, run_id: RunId, *, after: EventId | None, block_s: float, limit: int = 100
    ) -> list[LoggedEvent]:
        """The run's next events after `after` (from the first with None), oldest first.

        Waits up to `block_s` for one when there is none yet (0: answer at once); empty when none came.

        Raises:
            StoreUnavailable: the log's store did not answer.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Write what was appended (within a bounded time), then stop."""
