"""Trace steps: every LLM call and every tool call of a run is one step."""

from datetime import datetime
from typing import Any

import msgspec

from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, ToolCall, Usage
from agentkit.domain.tools import ToolResult


class LLMStep(msgspec.Struct, frozen=True, kw_only=True, tag="llm"):
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


class ToolStep(msgspec.Struct, frozen=True, kw_only=True, tag="tool"):
    """One tool call: its name, arguments and result."""

    run_id: RunId
    step_no: int
    created_at: datetime
    latency_ms: float
    call_id: ToolCallId
    tool_name: str
    arguments: dict[str, Any]
    result: ToolResult


Step = LLMStep | ToolStep
