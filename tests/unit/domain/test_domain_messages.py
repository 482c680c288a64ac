"""Usage totals, assistant messages from responses and the text a tool result shows the model."""

import pytest

from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolResult


def test_usage_totals_input_and_output() -> None:
    assert Usage(input_tokens=15, output_tokens=9).total_tokens == 24
    assert Usage().total_tokens == 0


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
