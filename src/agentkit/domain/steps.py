"""Trace steps: every LLM call and every tool call of a run is one step."""

import hashlib
from datetime import datetime
from typing import Any, Final

import msgspec

from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolResult, ToolSchema

# canonical JSON (keys sorted), as digests are taken of it: one encoder, not one per call
_encode_sorted: Final = msgspec.json.Encoder(order="sorted").encode


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of a value's canonical JSON (keys sorted)."""
    return hashlib.sha256(_encode_sorted(value)).hexdigest()


# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class StoredMessage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One message of a run's conversation, stored once however many LLM calls sent it.

    Attributes:
        seq: Its place in the conversation, from 1 (the system prompt); negative for a system prompt a
            handoff sent in place of message 1 (minus the number of the LLM step that first sent it).
        message: The message as stored (redacted where the settings say so; secrets never).
        sent_digest: The digest of the message as it was sent, when it is stored in another form
            (redacted) or was read back; None when `message` is what was sent (the digest is then
            taken when asked for: most stored messages are never compared).
    """

    seq: int
    message: Message
    sent_digest: str | None = None

    @property
    def digest(self) -> str:
        """SHA-256 of the message as it was sent, before any redaction: two runs' messages can be
        compared, and a stored prefix checked, without their content."""
        return digest_of(self.message) if self.sent_digest is None else self.sent_digest


class ToolSet(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The tool schemas one LLM call offered, stored once per run under their digest."""

    digest: str
    schemas: tuple[ToolSchema, ...]


class PromptRef(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What one LLM call sent, by reference: its run's messages 1..message_count and one tool set.

    A run's conversation only grows, so every call sends a prefix of it: each message is stored once
    and each call names how much of it went out, which keeps a run's storage linear in its steps.

    Attributes:
        message_count: The call sent the run's stored messages with seq 1 to this.
        tools_digest: The digest of the tool set it offered (None: no tools).
        provider: The provider's name (LLM_PROVIDER).
        model: The model asked for.
        parameters: The sampling parameters sent (temperature, max_tokens); never keys or headers.
        payloads: False when the messages were stored without their content (TRACE_PAYLOADS=false).
        system_seq: Set once a handoff replaced the system prompt: the call sent the stored message
            with this seq (negative, apart from the conversation's positions) in place of message 1.
    """

    message_count: int
    tools_digest: str | None = None
    provider: str = ""
    model: str = ""
    parameters: dict[str, Any] = {}
    payloads: bool = True
    system_seq: int | None = None


def prompt_order(seq: int) -> tuple[bool, int]:
    """The order a run's stored messages are listed in: the conversation (seq 1, 2, ...) first, so each
    call's messages are a prefix of the list, then the system prompts handoffs put in place of message 1
    (negative seqs, in the order they were sent)."""
    return seq < 0, abs(seq)


class PromptDelta(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What an LLM call sent that no earlier call of its run did: the sinks store it, later calls refer to it."""

    messages: tuple[StoredMessage, ...] = ()
    tool_set: ToolSet | None = None


class RunPrompts(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a run's LLM calls sent: its messages in order (`prompt_order`) and its tool sets by digest."""

    messages: tuple[StoredMessage, ...] = ()
    tool_sets: dict[str, tuple[ToolSchema, ...]] = {}

    def sent_by(self, step: "LLMStep") -> tuple[list[Message], list[ToolSchema]]:
        """The messages and tools `step` sent, rebuilt from its reference."""
        if step.prompt is None:
            return [], []
        messages = [stored.message for stored in self.messages[: step.prompt.message_count]]
        system_seq = step.prompt.system_seq
        if system_seq is not None and messages:  # a handoff's agent sent its own system prompt
            messages[0] = next((s.message for s in self.messages if s.seq == system_seq), messages[0])
        digest = step.prompt.tools_digest
        return messages, list(self.tool_sets.get(digest, ())) if digest else []


class LLMStep(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag="llm"):
    """One call to the LLM: what it answered and what it cost.

    Attributes:
        run_id: The run it belongs to.
        step_no: Its position in the run's trace, from 1.
        created_at: When it finished.
        latency_ms: Wall time of the call (retries included).
        usage: Tokens spent.
        text: The assistant's text.
        tool_calls: The tool calls it asked for.
        finish_reason: Why the model stopped.
        attempts: Provider requests it took, retries included.
        error: Set when the call failed for good.
        refusal: The provider's refusal, when the model refused.
        provider_data: Opaque values the provider needs echoed back with this turn (kept so a
            resumed run sends the conversation exactly as it was).
        error_type: The kind of that failure (`LLMUnavailable`, `LLMRequestError`).
        prompt: What it sent, by reference to the run's stored messages and tool sets.
        sent: The messages and tool set it was the first of its run to send (the sinks store them;
            steps read back carry None here).
        response_id: The provider's id of the response.
        response_model: The model that answered, as the provider names it.
        provider_finish_reason: The provider's own finish reason, before translation.
        cost_usd: What the call cost in US dollars, from the price table; None when the model's
            price is unknown (never 0 for want of one).
    """

    run_id: RunId
    step_no: int
    created_at: datetime
    latency_ms: float
    usage: Usage = Usage()
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason | None = None
    attempts: int = 1
    error: str | None = None
    refusal: str | None = None
    provider_data: dict[str, Any] | None = None

    error_type: str | None = None
    prompt: PromptRef | None = None
    sent: PromptDelta | None = None
    response_id: str | None = None
    response_model: str | None = None
    provider_finish_reason: str | None = None
    cost_usd: float | None = None
    redacted: bool = False  # stored with content left out or redacted: not what the model wrote
    agent: str | None = None  # the agent that asked, named in runs that can hand off (None: the run's)

    def response(self) -> LLMResponse:
        """The LLM response this step stored (what a resumed run replays instead of asking again)."""
        return LLMResponse(
            text=self.text,
            tool_calls=self.tool_calls,
            usage=self.usage,
            finish_reason=self.finish_reason or FinishReason.STOP,
            refusal=self.refusal,
            attempts=self.attempts,
            provider_data=self.provider_data,
        )


class ToolStep(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag="tool"):
    """One tool call: its name, arguments and result, and when it ran.

    The calls of one model turn may run at once: each is a step of its own, numbered in the order
    they ended, and their start and end times show how they overlapped.

    Attributes:
        run_id: The run it belongs to.
        step_no: Its position in the run's trace, from 1.
        created_at: When it ended.
        latency_ms: Wall time of the call.
        call_id: The model's id for the call.
        tool_name: The tool called.
        arguments: The arguments the model gave.
        result: What the call returned (or why it failed).
        redacted: Stored with content left out or redacted: not what the model read.
        started_at: When it started (None for steps stored before runs recorded it).
    """

    run_id: RunId
    step_no: int
    created_at: datetime
    latency_ms: float
    call_id: ToolCallId
    tool_name: str
    arguments: dict[str, Any]
    result: ToolResult
    redacted: bool = False
    started_at: datetime | None = None


Step = LLMStep | ToolStep
