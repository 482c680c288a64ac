"""Usage arithmetic, assistant messages from responses and the text a tool result shows the model."""

import pytest

from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolResult


def test_usage_adds_input_and_output_separately() -> None:
    total = Usage(input_tokens=10, output_tokens=2) + Usage(input_tokens=5, output_tokens=7)
    assert total == Usage(input_tokens=15, output_tokens=9)
    assert total.total_tokens == 24


def test_usage_starts_at_zero() -> None:
    assert Usage() + Usage() == Usage(input_tokens=0, output_tokens=0)


def test_response_becomes_an_assistant_message_with_its_calls_and_provider_data() -> None:
    lookup = ToolCall(id=ToolCallId("c1"), name="weather", arguments={"city": "Paris"})
    response = LLMResponse(
        text="Let me check.",
        tool_calls=(lookup,),
        usage=Usage(input_tokens=3),
        finish_reason=FinishReason.TOOL_CALLS,
        provider_data={"signature": "abc"},
    )
    assert response.to_message() == Message(
        role="assistant", content="Let me check.", tool_calls=(lookup,), provider_data={"signature": "abc"}
    )


@pytest.mark.parametrize(
    ("result", "text"),
    [
        (ToolResult(ok=True, output="42"), "42"),
        (ToolResult(ok=True, output="4242", truncated=True), "4242\n[output truncated]"),
        (ToolResult(ok=False, error="city not found"), "ERROR: city not found"),
        (ToolResult(ok=False, output="ignored", error="boom"), "ERROR: boom"),
    ],
    ids=["ok", "truncated", "error", "error-ignores-output"],
)
def test_model_text(result: ToolResult, text: str) -> None:
    assert result.model_text() == text
