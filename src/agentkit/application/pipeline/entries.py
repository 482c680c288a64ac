"""What a run hands the step pipeline: a step with what its LLM call sent, or a run as it was stored."""

import contextvars

from agentkit.domain.ids import RunId
from agentkit.domain.messages import LLMDelta, Message
from agentkit.domain.run import Run
from agentkit.domain.steps import Step
from agentkit.domain.tools import ToolSchema


class TraceHealth:
    """What the pipeline tells a run about its own steps once they were delivered.

    Attributes:
        gaps: Steps the durable trace refused: a run whose trace lacks a step cannot claim success.
        redacted: A step was stored redacted: the run could not go on from its stored steps.
    """

    __slots__ = ("gaps", "redacted")

    def __init__(self) -> None:
        self.gaps = 0
        self.redacted = False


class SentPrompt:
    """The part of an LLM call's prompt no earlier call of its run sent, as it was sent.

    The writer turns it into the stored form (digests, redaction) in its batches: the run only
    hands over references to messages it holds anyway.

    Attributes:
        first_seq: The conversation position (from 1) of `messages[0]`.
        messages: The messages new to the run's trace.
        tools: The tool set new to the run's trace, with its digest (None: already stored, or none).
        system: A system prompt a handoff put in place of message 1, with the (negative) seq it is
            stored under (None: none new).
    """

    __slots__ = ("first_seq", "messages", "system", "tools")

    def __init__(
        self,
        first_seq: int,
        messages: tuple[Message, ...],
        tools: tuple[str, tuple[ToolSchema, ...]] | None,
        system: tuple[int, Message] | None = None,
    ) -> None:
        self.first_seq = first_seq
        self.messages = messages
        self.tools = tools
        self.system = system


class StepEntry:
    """A step as the loop made it (nothing redacted yet), with what its LLM call sent first."""

    __slots__ = ("health", "sent", "step")

    def __init__(self, step: Step, health: TraceHealth, sent: SentPrompt | None = None) -> None:
        self.step = step
        self.health = health
        self.sent = sent


class RunEntry:
    """A run as it was stored, with the context of the code that stored it (a request's trace context)."""

    __slots__ = ("context", "run")

    def __init__(self, run: Run, context: contextvars.Context) -> None:
        self.run = run
        self.context = context


class DeltaEntry:
    """A fragment of an LLM step while it is written (None: the resumed run asks again, earlier fragments void)."""

    __slots__ = ("delta", "run_id", "step_no")

    def __init__(self, run_id: RunId, step_no: int, delta: LLMDelta | None) -> None:
        self.run_id = run_id
        self.step_no = step_no
        self.delta = delta


Entry = StepEntry | RunEntry | DeltaEntry
