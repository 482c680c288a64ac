"""Neutral messages and tool schemas to Gemini contents and function declarations, and back.

Pure functions over the google-genai types: no client, no I/O.

Gemini needs some of what it sends echoed back next turn: the thought signature on a function
call (and on the text that ends a turn). They travel as base64 text in `ToolCall.provider_data`
and `LLMResponse.provider_data`, under keys that name Gemini so another provider ignores them.
"""

import base64
import uuid
from collections.abc import Sequence
from typing import Any

from google.genai import types

from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

THOUGHT_SIGNATURE_KEY = "gemini_thought_signature"
TEXT_SIGNATURE_KEY = "gemini_text_signature"
# Gemini did not give the call an id; we made one up, and must not send it back as Gemini's.
SYNTHETIC_ID_KEY = "gemini_synthetic_id"
_SYNTHETIC_PREFIX = "gemini-call-"

_BLOCKED = frozenset(
    {
        types.FinishReason.SAFETY,
        types.FinishReason.PROHIBITED_CONTENT,
        types.FinishReason.BLOCKLIST,
        types.FinishReason.SPII,
        types.FinishReason.RECITATION,
        types.FinishReason.IMAGE_SAFETY,
        types.FinishReason.IMAGE_PROHIBITED_CONTENT,
        types.FinishReason.MODEL_ARMOR,
    }
)


def to_gemini_tools(tools: Sequence[ToolSchema]) -> list[types.Tool]:
    """One Gemini tool holding a function declaration per neutral schema (JSON schema as is)."""
    if not tools:
        return []
    declarations = [
        types.FunctionDeclaration(name=tool.name, description=tool.description, parameters_json_schema=tool.parameters)
        for tool in tools
    ]
    return [types.Tool(function_declarations=declarations)]


def to_gemini_contents(messages: Sequence[Message]) -> tuple[str | None, list[types.Content]]:
    """The system instruction and the contents of a conversation, in order.

    System messages join into the system instruction (Gemini has no system role). Tool results
    that follow one another go into one user turn, answering the calls of the model turn before.
    """
    system = [message.content for message in messages if message.role == "system" and message.content]
    calls: dict[str, ToolCall] = {}
    contents: list[types.Content] = []
    responses: list[types.Part] = []
    for message in messages:
        if message.role == "tool":
            responses.append(_function_response(message, calls))
            continue
        if responses:
            contents.append(types.Content(role="user", parts=responses))
            responses = []
        if message.role == "user":
            contents.append(types.Content(role="user", parts=[types.Part(text=message.content)]))
        elif message.role == "assistant":
            calls.update((call.id, call) for call in message.tool_calls)
            parts = _model_parts(message)
            if parts:  # an empty model turn is an error to Gemini
                contents.append(types.Content(role="model", parts=parts))
    if responses:
        contents.append(types.Content(role="user", parts=responses))
    return ("\n\n".join(system) if system else None), contents


def _model_parts(message: Message) -> list[types.Part]:
    parts: list[types.Part] = []
    if message.content:
        signature = (message.provider_data or {}).get(TEXT_SIGNATURE_KEY)
        parts.append(types.Part(text=message.content, thought_signature=_decode(signature)))
    for call in message.tool_calls:
        data = call.provider_data or {}
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=None if data.get(SYNTHETIC_ID_KEY) else call.id, name=call.name, args=call.arguments
                ),
                thought_signature=_decode(data.get(THOUGHT_SIGNATURE_KEY)),
            )
        )
    return parts


def _function_response(message: Message, calls: dict[str, ToolCall]) -> types.Part:
    # Gemini pairs a response with its call by name (and by id when it gave one).
    call = calls.get(message.tool_call_id or "")
    synthetic = call is not None and bool((call.provider_data or {}).get(SYNTHETIC_ID_KEY))
    return types.Part(
        function_response=types.FunctionResponse(
            id=None if synthetic else message.tool_call_id,
            name=message.name or (call.name if call else "") or "tool",
            response={"result": message.content},
        )
    )


def from_gemini_response(
    response: types.GenerateContentResponse, *, calls: Sequence[ToolCall] | None = None
) -> LLMResponse:
    """The neutral response for the first candidate; blocked prompts and answers are refusals.

    Args:
        response: What the SDK read (for a stream, its chunks merged).
        calls: The calls already read from the response's function-call parts with
            `tool_call_from`, in order; a stream reads each as it comes and sends its id before
            the response is whole. By default they are read here.

    Raises:
        ProviderUnavailable: the model wrote a function call Gemini could not parse
            (`MALFORMED_FUNCTION_CALL`); sampling again usually fixes it.
    """
    usage = _usage(response.usage_metadata)
    feedback = response.prompt_feedback
    if not response.candidates:
        if feedback is not None and feedback.block_reason is not None:
            reason = _enum_name(feedback.block_reason)
            detail = f": {feedback.block_reason_message}" if feedback.block_reason_message else ""
            return LLMResponse(
                usage=usage, finish_reason=FinishReason.REFUSED, refusal=f"Gemini blocked the prompt ({reason}){detail}"
            )
        raise ProviderUnavailable("Gemini returned no candidate")
    candidate = response.candidates[0]
    finish = candidate.finish_reason
    if finish == types.FinishReason.MALFORMED_FUNCTION_CALL:
        raise ProviderUnavailable(f"Gemini could not parse the model's function call: {candidate.finish_message or ''}")
    texts: list[str] = []
    read: list[ToolCall] = []
    text_signature: str | None = None
    parts = (candidate.content.parts if candidate.content else None) or []
    for part in parts:
        if part.function_call is not None:
            if calls is None:
                read.append(tool_call_from(part.function_call, part.thought_signature))
        elif part.text is not None and not part.thought:
            texts.append(part.text)
            text_signature = _encode(part.thought_signature) or text_signature
        elif part.thought_signature:
            text_signature = _encode(part.thought_signature)
    if finish in _BLOCKED:
        detail = f": {candidate.finish_message}" if candidate.finish_message else ""
        return LLMResponse(
            usage=usage,
            finish_reason=FinishReason.REFUSED,
            refusal=f"Gemini blocked the answer ({_enum_name(finish)}){detail}",
        )
    tool_calls = tuple(read if calls is None else calls)
    return LLMResponse(
        text="".join(texts),
        tool_calls=tool_calls,
        usage=usage,
        finish_reason=_finish_reason(finish, has_calls=bool(tool_calls)),
        provider_data={TEXT_SIGNATURE_KEY: text_signature} if text_signature and texts else None,
        response_id=response.response_id or None,
        response_model=response.model_version or None,
        provider_finish_reason=None if finish is None else _enum_name(finish),
    )


def tool_call_from(call: types.FunctionCall, thought_signature: bytes | None) -> ToolCall:
    """The neutral call for a function-call part; an id is made up when Gemini gave none (and marked so)."""
    data: dict[str, Any] = {}
    if call.id:
        call_id = call.id
    else:
        call_id = f"{_SYNTHETIC_PREFIX}{uuid.uuid4().hex[:16]}"
        data[SYNTHETIC_ID_KEY] = True
    signature = _encode(thought_signature)
    if signature:
        data[THOUGHT_SIGNATURE_KEY] = signature
    return ToolCall(
        id=ToolCallId(call_id), name=call.name or "", arguments=dict(call.args or {}), provider_data=data or None
    )


def _finish_reason(finish: types.FinishReason | None, *, has_calls: bool) -> FinishReason:
    if has_calls:
        return FinishReason.TOOL_CALLS
    if finish is None or finish == types.FinishReason.STOP:
        return FinishReason.STOP
    if finish == types.FinishReason.MAX_TOKENS:
        return FinishReason.LENGTH
    return FinishReason.OTHER


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if metadata is None:
        return Usage()
    # Thinking tokens are billed as output: count them, so the trace accounts for every token.
    return Usage(
        input_tokens=(metadata.prompt_token_count or 0) + (metadata.tool_use_prompt_token_count or 0),
        output_tokens=(metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0),
        cache_read_tokens=metadata.cached_content_token_count or 0,  # a part of prompt_token_count
    )


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


def _encode(signature: bytes | None) -> str | None:
    return base64.b64encode(signature).decode("ascii") if signature else None


def _decode(signature: object) -> bytes | None:
    return base64.b64decode(signature) if isinstance(signature, str) and signature else None
