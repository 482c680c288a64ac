"""Neutral messages and tool schemas to OpenAI Chat Completions, and a completion back.

Pure functions: no SDK client, no I/O. The request side builds the plain dicts the API takes;
the response side reads the SDK's `ChatCompletion`.
"""

import json
from collections.abc import Sequence
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolUnionParam

from agentkit.adapters.llm.errors import ProviderUnavailable, shorten
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

# The model's argument text, kept when it is not a JSON object so the next turn echoes what the
# model really sent (not an empty object it never wrote).
RAW_ARGUMENTS_KEY = "openai_raw_arguments"

_FINISH_REASONS = {
    "stop": FinishReason.STOP,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.REFUSED,
}


def to_openai_tools(tools: Sequence[ToolSchema]) -> list[ChatCompletionToolUnionParam]:
    """Function tools in the Chat Completions format."""
    return [
        {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
        }
        for tool in tools
    ]


def to_openai_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """The conversation in the Chat Completions format, in the same order."""
    return [_to_openai_message(message) for message in messages]


def _to_openai_message(message: Message) -> ChatCompletionMessageParam:
    if message.role == "system":
        return {"role": "system", "content": message.content}
    if message.role == "user":
        return {"role": "user", "content": message.content}
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    calls: list[Any] = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments_text(call)}}
        for call in message.tool_calls
    ]
    # The API takes no content beside tool calls when the model wrote none; "" upsets some servers.
    if message.content:
        return {"role": "assistant", "content": message.content, "tool_calls": calls}
    return {"role": "assistant", "tool_calls": calls}


def _arguments_text(call: ToolCall) -> str:
    raw = (call.provider_data or {}).get(RAW_ARGUMENTS_KEY)
    if isinstance(raw, str):
        return raw
    return json.dumps(call.arguments, ensure_ascii=False)


def from_openai_completion(completion: ChatCompletion) -> LLMResponse:
    """The neutral response for the first choice of a completion.

    Raises:
        ProviderUnavailable: the completion holds no choice (some compatible servers do that
            when they are overloaded), so another attempt may succeed.
    """
    if not completion.choices:
        raise ProviderUnavailable("the server returned a completion without choices")
    choice = completion.choices[0]
    message = choice.message
    calls = tuple(_from_openai_call(call) for call in message.tool_calls or ())
    usage = completion.usage
    refusal = message.refusal
    finish = _FINISH_REASONS.get(str(choice.finish_reason), FinishReason.OTHER)
    if refusal:
        finish = FinishReason.REFUSED
    elif finish is FinishReason.REFUSED:
        refusal = "the provider's content filter withheld the answer (finish_reason=content_filter)"
    elif calls:
        # Some compatible servers (Ollama, llama.cpp) say "stop" even when they call tools.
        finish = FinishReason.TOOL_CALLS
    return LLMResponse(
        text=message.content or "",
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
        ),
        finish_reason=finish,
        refusal=refusal,
    )


def _from_openai_call(call: Any) -> ToolCall:
    if call.type != "function":
        return ToolCall(
            id=ToolCallId(call.id),
            name=getattr(getattr(call, "custom", None), "name", "") or "",
            arguments_error=f"unsupported tool call type {call.type!r}; call it as a function",
        )
    name: str = call.function.name
    raw: str = call.function.arguments or ""
    arguments, error = parse_arguments(raw)
    return ToolCall(
        id=ToolCallId(call.id),
        name=name,
        arguments=arguments,
        arguments_error=error,
        provider_data={RAW_ARGUMENTS_KEY: raw} if error else None,
    )


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """The model's argument text as a JSON object, or an error message the model can act on."""
    if not raw.strip():
        return {}, None  # some servers send "" for a tool without parameters
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"{exc.msg} at position {exc.pos} in {shorten(raw)!r}"
    if not isinstance(value, dict):
        return {}, f"got a JSON {type(value).__name__} instead: {shorten(raw)!r}"
    return value, None
