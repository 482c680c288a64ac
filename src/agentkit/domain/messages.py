"""The neutral conversation types that every LLM provider adapter translates to and from."""

from enum import StrEnum
from typing import Any, Literal

import msgspec

from agentkit.domain.ids import ToolCallId

Role = Literal["system", "user", "assistant", "tool"]


# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class ToolCall(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A request from the model to run one tool.

    Attributes:
        id: The provider's call id; the tool result answers it by this id.
        name: The tool's name as the model spelled it.
        arguments: The parsed arguments (empty when they could not be parsed).
        arguments_error: Set when the provider sent arguments that are not a JSON object; the
            registry turns it into a tool error the model can read instead of running the tool.
        provider_data: Opaque values the provider needs echoed back on the next turn
            (for example Gemini's thought signatures).
    """

    id: ToolCallId
    name: str
    arguments: dict[str, Any] = {}
    arguments_error: str | None = None
    provider_data: dict[str, Any] | None = None


class Message(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """One message of the conversation.

    Tool output is only ever carried by `role="tool"` messages: it is untrusted data and never
    part of the system prompt.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: ToolCallId | None = None
    name: str | None = None
    provider_data: dict[str, Any] | None = None
    # a tool message: the call failed and `content` says why (Anthropic's tool_result `is_error`)
    is_error: bool = False


class Usage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Tokens spent by one LLM call.

    Attributes:
        input_tokens: Every input token, those read from or written to a prompt cache included.
        output_tokens: Output tokens, reasoning included.
        cache_read_tokens: The part of the input read from the provider's prompt cache (billed lower).
        cache_write_tokens: The part of the input written to the prompt cache (billed higher, where
            the provider charges for writes).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


class FinishReason(StrEnum):
    """Why the model stopped producing output, in provider-neutral terms."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    REFUSED = "refused"
    OTHER = "other"


class LLMResponse(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What one LLM call returned.

    Attributes:
        text: The assistant's text (may be empty when it only calls tools).
        tool_calls: The tools it asked to run, in order.
        usage: Tokens spent on this call.
        finish_reason: Why it stopped.
        refusal: The provider's refusal or safety-block explanation, when it refused.
        attempts: How many provider requests this response took (retries included).
        provider_data: Opaque values to echo back on the assistant message next turn.
        response_id: The provider's id of this response, when it gives one.
        response_model: The model that answered, as the provider names it (may be more exact than the one asked).
        provider_finish_reason: The provider's own finish reason before translation (`end_turn`, `SAFETY`).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    finish_reason: FinishReason = FinishReason.STOP
    refusal: str | None = None
    attempts: int = 1
    provider_data: dict[str, Any] | None = None
    response_id: str | None = None
    response_model: str | None = None
    provider_finish_reason: str | None = None

    def to_message(self) -> Message:
        """The assistant message that records this response in the history."""
        return Message(
            role="assistant",
            content=self.text,
            tool_calls=self.tool_calls,
            provider_data=self.provider_data,
        )


class TextDelta(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag="text"):
    """A fragment of the assistant's text, as a streaming model sends it."""

    text: str


class ToolCallDelta(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag="tool_call"):
    """A fragment of a tool call, as a streaming model sends it.

    Attributes:
        index: The call's place among the turn's calls, from 0 (providers number them so).
        id: The call's id, on the first fragment of the call that carries it.
        name: The tool's name, on the first fragment of the call that carries it.
        arguments: A piece of the call's arguments JSON; the pieces of one call, joined in order,
            are its arguments as the model wrote them.
    """

    index: int
    id: ToolCallId | None = None
    name: str | None = None
    arguments: str = ""


LLMDelta = TextDelta | ToolCallDelta
"""A piece of a streamed LLM response; the stream ends with the whole `LLMResponse`."""
