"""Neutral messages and tool schemas to the Anthropic Messages API, and a message back.

Pure functions: no SDK client, no I/O. The request side builds the plain dicts the API takes:

- system messages join into `system` (Anthropic has no system role);
- an assistant turn is its text block (when it wrote any: empty text blocks are rejected) and one
  `tool_use` block per call; the tool results that answer it go back as `tool_result` blocks of
  ONE user message, in the calls' order, with `is_error` on a failed call;
- consecutive user content (results, then the next goal) shares one user message, so roles alternate;
- tools are `{name, description, input_schema}`.

Prompt caching: a `cache_control: {"type": "ephemeral"}` breakpoint goes on the last tool, the
last system block and the last block of the conversation. Each breakpoint caches the prefix up to
it, so the next turn (which resends the same prefix and adds to it) reads the tools, the system
prompt and the conversation so far from the cache; Anthropic allows four breakpoints, we use three.
"""

import json
from collections.abc import Sequence
from typing import Any

from agentkit.adapters.llm.errors import shorten
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

CACHE_BREAKPOINT: dict[str, str] = {"type": "ephemeral"}
# The model's argument text, kept when it is not a JSON object (a stream's input_json_delta pieces
# may not parse): it is shown in the trace, and `{}` goes back next turn (Anthropic wants an object).
RAW_INPUT_KEY = "anthropic_raw_input"

_FINISH_REASONS = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.REFUSED,
}


def to_anthropic_tools(tools: Sequence[ToolSchema], *, cache: bool = True) -> list[dict[str, Any]]:
    """Client tools with JSON schemas as `input_schema`; a cache breakpoint on the last one."""
    out: list[dict[str, Any]] = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.parameters} for tool in tools
    ]
    if cache and out:
        out[-1]["cache_control"] = CACHE_BREAKPOINT
    return out


def to_anthropic_system(messages: Sequence[Message], *, cache: bool = True) -> list[dict[str, Any]]:
    """The system messages as text blocks (none when there are none); a cache breakpoint on the last."""
    texts = [message.content for message in messages if message.role == "system" and message.content]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
    if cache and blocks:
        blocks[-1]["cache_control"] = CACHE_BREAKPOINT
    return blocks


def to_anthropic_messages(messages: Sequence[Message], *, cache: bool = True) -> list[dict[str, Any]]:
    """The conversation (system messages left out) as alternating user and assistant messages, in order."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if cache and out:
        last = out[-1]["content"][-1]
        out[-1]["content"][-1] = {**last, "cache_control": CACHE_BREAKPOINT}
    return out


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content or "(no output)",  # an empty text block is rejected
        }
        if message.is_error:
            result["is_error"] = True
        return [result]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    if message.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in message.tool_calls
        )
    return blocks


def from_anthropic_message(message: Any) -> LLMResponse:
    """The neutral response for a Messages API `Message` (the SDK's, or one a stream assembled).

    Text blocks join into the text; `tool_use` blocks are the calls, in order; thinking blocks
    and server-tool blocks are left out. A `refusal` stop is a refusal, with the stop details'
    explanation when there is one.
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content or ():
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            calls.append(tool_call_from(block.id, block.name, block.input))
    stop = message.stop_reason
    finish = _FINISH_REASONS.get(str(stop), FinishReason.OTHER)
    usage = usage_from(message.usage)
    if finish is FinishReason.REFUSED:
        return LLMResponse(
            usage=usage,
            finish_reason=FinishReason.REFUSED,
            refusal=_refusal(message),
            response_id=message.id or None,
            response_model=message.model or None,
            provider_finish_reason=str(stop),
        )
    if calls and finish is not FinishReason.LENGTH:
        finish = FinishReason.TOOL_CALLS
    return LLMResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=usage,
        finish_reason=finish,
        response_id=message.id or None,
        response_model=message.model or None,
        provider_finish_reason=None if stop is None else str(stop),
    )


def _refusal(message: Any) -> str:
    details = getattr(message, "stop_details", None)
    explanation = getattr(details, "explanation", None)
    category = getattr(details, "category", None)
    said = "".join(block.text for block in message.content or () if getattr(block, "type", None) == "text")
    reason = explanation or said.strip() or "Anthropic declined to answer (stop_reason=refusal)"
    return f"{reason} ({category})" if category else reason


def tool_call_from(call_id: str, name: str, given: Any) -> ToolCall:
    """The neutral call for a `tool_use` block; input that is not a JSON object becomes `arguments_error`."""
    if isinstance(given, dict):
        return ToolCall(id=ToolCallId(call_id), name=name, arguments=given)
    raw = given if isinstance(given, str) else json.dumps(given)
    if isinstance(given, str):
        try:
            value = json.loads(given, strict=False) if given.strip() else {}
        except json.JSONDecodeError as exc:
            error = f"{exc.msg} (character {exc.pos}) in {shorten(given)!r}"
        else:
            if isinstance(value, dict):
                return ToolCall(id=ToolCallId(call_id), name=name, arguments=value)
            error = f"got a JSON {type(value).__name__} instead: {shorten(given)!r}"
    else:
        error = f"got a JSON {type(given).__name__} instead of an object: {shorten(raw)!r}"
    return ToolCall(id=ToolCallId(call_id), name=name, arguments_error=error, provider_data={RAW_INPUT_KEY: raw})


def usage_from(usage: Any) -> Usage:
    """Neutral usage: input counts every input token, cache reads and writes included (as the others count).

    Anthropic's `input_tokens` leaves out the tokens read from or written to the cache; they are
    billed apart, at their own prices, so they are kept apart too (`cache_read_tokens`,
    `cache_write_tokens`).
    """
    if usage is None:
        return Usage()
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return Usage(
        input_tokens=(getattr(usage, "input_tokens", None) or 0) + read + written,
        output_tokens=getattr(usage, "output_tokens", None) or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
