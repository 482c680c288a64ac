"""Neutral messages and tool schemas to OpenAI Chat Completions, and a completion back.

Pure functions: no SDK client, no I/O. The request side builds the plain dicts the API takes;
the response side reads the SDK's `ChatCompletion`.
"""

import json
from collections.abc import Collection, Sequence
from typing import Any, Literal

from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolUnionParam

from agentkit.adapters.llm.errors import ProviderUnavailable, shorten
from agentkit.adapters.llm.text_tool_calls import find_text_tool_calls
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

# The model's argument text, kept when it is not a JSON object so the next turn echoes what the
# model really sent (not an empty object it never wrote).
RAW_ARGUMENTS_KEY = "openai_raw_arguments"
# Marks a call read from the answer's text (LLM_TEXT_TOOL_CALLS), so a trace shows where it came from.
TEXT_TOOL_CALL_KEY = "openai_text_tool_call"

ToolCallContent = Literal["empty", "null", "omit"]
"""What an assistant message that calls tools and says nothing carries as `content` (LLM_TOOL_CALL_CONTENT).

- `empty` (the default): `""`. OpenAI accepts it; llama-cpp-python's templates need the key
  (without it they answer HTTP 500 "'dict object' has no attribute 'content'", recorded), and
  templates that concatenate `message['content']` need a string, which rules out null.
- `null`: for gateways that reject an empty string (Anthropic- and Bedrock-backed shims answer
  "text content blocks must be non-empty"); OpenAI and llama-cpp-python accept it too.
- `omit`: no key at all, for a server that rejects both.
"""

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


def to_openai_messages(
    messages: Sequence[Message], *, tool_call_content: ToolCallContent = "empty"
) -> list[ChatCompletionMessageParam]:
    """The conversation in the Chat Completions format, in the same order.

    Args:
        messages: The neutral conversation.
        tool_call_content: What a tool-calling assistant message without text carries as content.
    """
    return [_to_openai_message(message, tool_call_content) for message in messages]


def _to_openai_message(message: Message, tool_call_content: ToolCallContent) -> ChatCompletionMessageParam:
    if message.role == "system":
        return {"role": "system", "content": message.content}
    if message.role == "user":
        return {"role": "user", "content": message.content}
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if not message.tool_calls:
        return {"role": "assistant", "content": message.content}
    calls: list[Any] = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments_text(call)}}
        for call in message.tool_calls
    ]
    if message.content:
        return {"role": "assistant", "content": message.content, "tool_calls": calls}
    if tool_call_content == "omit":
        return {"role": "assistant", "tool_calls": calls}
    return {"role": "assistant", "content": "" if tool_call_content == "empty" else None, "tool_calls": calls}


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as JSON text: as the model wrote them when they did not parse, else re-encoded."""
    raw = (call.provider_data or {}).get(RAW_ARGUMENTS_KEY)
    if isinstance(raw, str):
        return raw
    # Strict JSON whatever the model wrote (raw newlines included): vLLM parses the history's
    # arguments with a strict json.loads and would see an empty object otherwise.
    return json.dumps(call.arguments, ensure_ascii=False)


def from_openai_completion(completion: ChatCompletion, *, text_tool_names: Collection[str] = ()) -> LLMResponse:
    """The neutral response for the first choice of a completion.

    Args:
        completion: What the SDK read.
        text_tool_names: With LLM_TEXT_TOOL_CALLS on, the tools offered: an answer that consists
            of JSON tool calls naming them is read as those calls (see `text_tool_calls`).

    Raises:
        ProviderUnavailable: the completion holds no choice (some compatible servers do that
            when they are overloaded), so another attempt may succeed.
    """
    if not completion.choices:
        raise ProviderUnavailable("the server returned a completion without choices")
    choice = completion.choices[0]
    message = choice.message
    text = message.content or ""
    calls = tuple(_from_openai_call(call) for call in message.tool_calls or ())
    if not calls and message.function_call is not None:
        # the pre-tools format, which some compatible servers still answer with
        function = message.function_call
        calls = (_tool_call(f"call_{completion.id}_0", function.name, function.arguments or ""),)
    if not calls and text_tool_names:
        found = find_text_tool_calls(text, text_tool_names)
        calls = tuple(
            _tool_call(f"call_{completion.id}_{index}", name, arguments, from_text=True)
            for index, (name, arguments) in enumerate(found)
        )
        text = "" if calls else text  # the text was the calls; echoing both would say them twice
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
        text=text,
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            # OpenAI caches long prompts by itself; the cached part is inside prompt_tokens
            cache_read_tokens=(getattr(usage.prompt_tokens_details, "cached_tokens", None) or 0) if usage else 0,
        ),
        finish_reason=finish,
        refusal=refusal,
        response_id=completion.id or None,
        response_model=completion.model or None,
        provider_finish_reason=None if choice.finish_reason is None else str(choice.finish_reason),
    )


def _from_openai_call(call: Any) -> ToolCall:
    if call.type != "function":
        return ToolCall(
            id=ToolCallId(call.id),
            name=getattr(getattr(call, "custom", None), "name", "") or "",
            arguments_error=f"unsupported tool call type {call.type!r}; call it as a function",
        )
    return _tool_call(call.id, call.function.name, call.function.arguments or "")


def _tool_call(call_id: str, name: str, arguments: dict[str, Any] | str, *, from_text: bool = False) -> ToolCall:
    if isinstance(arguments, str):
        parsed, error = parse_arguments(arguments)
    else:
        parsed, error = arguments, None
    provider_data: dict[str, Any] = {}
    if error:
        provider_data[RAW_ARGUMENTS_KEY] = arguments
    if from_text:
        provider_data[TEXT_TOOL_CALL_KEY] = True
    return ToolCall(
        id=ToolCallId(call_id),
        name=name,
        arguments=parsed,
        arguments_error=error,
        provider_data=provider_data or None,
    )


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """The model's argument text as a JSON object, or an error message the model can act on."""
    if not raw.strip():
        return {}, None  # some servers send "" for a tool without parameters
    try:
        # strict=False takes raw newlines and tabs inside strings, which small models served by
        # llama-cpp-python write (recorded) and which mean just what their escapes mean.
        value = json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        return {}, f"{exc.msg} (character {exc.pos}) in {shorten(raw)!r}"
    if not isinstance(value, dict):
        return {}, f"got a JSON {type(value).__name__} instead: {shorten(raw)!r}"
    return value, None
