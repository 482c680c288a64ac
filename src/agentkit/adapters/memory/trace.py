"""In-memory trace sinks: one that keeps steps, one that always fails (to prove runs survive it)."""

from collections import defaultdict
from collections.abc import Sequence

import msgspec

from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.domain.ids import RunId
from agentkit.domain.steps import LLMStep, RunPrompts, Step, StoredMessage, prompt_order
from agentkit.domain.tools import ToolSchema


class InMemoryTraceSink(TraceSink, TraceReader, PromptReader):
    """Keeps every step in memory, grouped by run, and each message an LLM step sent once per run."""

    local = True  # lives and dies with this process

    def __init__(self) -> None:
        self._steps: defaultdict[RunId, list[Step]] = defaultdict(list)
        self._messages: defaultdict[RunId, dict[int, StoredMessage]] = defaultdict(dict)
        self._tool_sets: defaultdict[RunId, dict[str, tuple[ToolSchema, ...]]] = defaultdict(dict)

    async def record(self, step: Step) -> None:
        """Keep the step (what it sent apart, as the Postgres sink keeps it)."""
        self._keep(step)

    async def record_batch(self, steps: Sequence[Step]) -> None:
        """Keep the steps, in order."""
        for step in steps:
            self._keep(step)

    def _keep(self, step: Step) -> None:
        if isinstance(step, LLMStep) and step.sent is not None:
            for stored in step.sent.messages:
                self._messages[step.run_id].setdefault(stored.seq, stored)
            if step.sent.tool_set is not None:
                self._tool_sets[step.run_id].setdefault(step.sent.tool_set.digest, step.sent.tool_set.schemas)
            step = msgspec.structs.replace(step, sent=None)
        self._steps[step.run_id].append(step)

    async def prompts(self, run_id: RunId) -> RunPrompts:
        """The run's messages by seq and its tool sets."""
        messages = self._messages.get(run_id, {})
        return RunPrompts(
            messages=tuple(messages[seq] for seq in sorted(messages, key=prompt_order)),
            tool_sets=dict(self._tool_sets.get(run_id, {})),
        )

    def forget(self, run_id: RunId) -> None:
        """Drop everything kept of the run (its repository forgot it)."""
        self._steps.pop(run_id, None)
        self._messages.pop(run_id, None)
        self._tool_sets.pop(run_id, None)

    async def flush(self) -> None:
        """Nothing waits: steps are kept as they come."""

    def flushed(self) -> bool:
        """Always: steps are kept as they come."""
        return True

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
