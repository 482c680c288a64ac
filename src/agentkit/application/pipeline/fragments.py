"""Fragments: a streamed LLM step's consecutive pieces of one part, joined into one event for the observers.

A model sends a token or a few at a time; the pipeline's writer hands the observers (the run event
log) what came since its last batch as one `DeltaEvent` per part, so a busy process writes one event
where the model sent dozens, and an idle one still passes each fragment on at once.
"""

from agentkit.application.pipeline.entries import DeltaEntry
from agentkit.application.ports.run_event_log import DeltaEvent, DeltaKind
from agentkit.domain.messages import TextDelta


class Fragments:
    """Consecutive fragments of one run's step and part (the text, or one call's arguments)."""

    __slots__ = ("call_id", "index", "kind", "name", "pieces", "run_id", "step_no")

    def __init__(self, entry: DeltaEntry) -> None:
        self.run_id = entry.run_id
        self.step_no = entry.step_no
        self.pieces: list[str] = []
        delta = entry.delta
        self.call_id: str | None = None
        self.name: str | None = None
        self.kind: DeltaKind
        if delta is None:
            self.kind, self.index = "retry", 0
        elif isinstance(delta, TextDelta):
            self.kind, self.index = "text", 0
            self.pieces.append(delta.text)
        else:
            self.kind, self.index = "tool_call", delta.index
            self.call_id, self.name = delta.id, delta.name
            self.pieces.append(delta.arguments)

    def take(self, entry: DeltaEntry) -> bool:
        """Join the entry's fragment if it continues these (same run, step and part, nothing new named)."""
        delta = entry.delta
        if delta is None or entry.run_id != self.run_id or entry.step_no != self.step_no or self.kind == "retry":
            return False
        if isinstance(delta, TextDelta):
            if self.kind != "text":
                return False
            self.pieces.append(delta.text)
            return True
        if self.kind != "tool_call" or delta.index != self.index or delta.id is not None or delta.name is not None:
            return False
        self.pieces.append(delta.arguments)
        return True

    def event(self) -> DeltaEvent:
        """The joined fragments as one event."""
        text = self.pieces[0] if len(self.pieces) == 1 else "".join(self.pieces)
        return DeltaEvent(
            step_no=self.step_no, kind=self.kind, index=self.index, text=text, call_id=self.call_id, name=self.name
        )
