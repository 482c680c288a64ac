"""The fake's OpenAI Chat Completions: `POST .../chat/completions`, whole or streamed as chunks."""

import json
from typing import Any

from agentkit.testing.llm_conformance.answers import Failure, FakeUsage, Reply
from agentkit.testing.llm_conformance.loopback import RecordedRequest, Rendered, SentResult, WireFormat, text_pieces

_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "refusal": "stop", "length": "length"}
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}


class OpenAIWire(WireFormat):
    """Chat Completions as OpenAI sends it (arguments as JSON text; a refusal in `message.refusal`)."""

    def __init__(self, model: str = "gpt-4.1-mini") -> None:
        self.model = model

    def wants_stream(self, request: RecordedRequest) -> bool:
        """`stream: true` in the body."""
        return bool((request.body or {}).get("stream"))

    def render(self, answer: Reply | Failure, request: RecordedRequest, *, stream: bool) -> Rendered:
        """A completion, its chunks ending in `[DONE]`, or an error body."""
        if isinstance(answer, Failure):
            kind = _ERROR_TYPES.get(answer.status, "server_error" if answer.status >= 500 else "rate_limit_error")
            body = {"error": {"message": answer.message, "type": kind, "code": None}}
            return Rendered(status=answer.status, headers=answer.headers, body=body)
        usage = _usage(answer.usage or FakeUsage())
        finish = "tool_calls" if answer.calls and answer.stop != "length" else _FINISH[answer.stop]
        calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments)},
            }
            for call in answer.calls
        ]
        head = {"id": "chatcmpl-fake", "created": 0, "model": self.model}
        if stream:
            return Rendered(events=_chunks(head, answer, calls, finish, usage))
        message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
        if calls:
            message["tool_calls"] = calls
        if answer.stop == "refusal":
            message["refusal"] = answer.refusal or "I can't help with that."
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return Rendered(body={**head, "object": "chat.completion", "choices": [choice], "usage": usage})

    def tool_results(self, request: RecordedRequest) -> list[SentResult]:
        """The `tool` messages, by `tool_call_id` (Chat Completions has no error mark)."""
        return [
            SentResult(call_id=message.get("tool_call_id"), text=message.get("content") or "")
            for message in (request.body or {}).get("messages", ())
            if message.get("role") == "tool"
        ]


def _usage(usage: FakeUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def _chunks(
    head: dict[str, Any], answer: Reply, calls: list[dict[str, Any]], finish: str, usage: dict[str, Any]
) -> list[str]:
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": word} for word in text_pieces(answer.text)]
    if answer.stop == "refusal":
        deltas.append({"refusal": answer.refusal or "I can't help with that."})
    for index, call in enumerate(calls):
        first = {"index": index, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"]}}
        deltas.append({"tool_calls": [{**first, "function": {**first["function"], "arguments": ""}}]})
        arguments = call["function"]["arguments"]
        for at in range(0, len(arguments), 7):
            piece = {"index": index, "function": {"arguments": arguments[at : at + 7]}}
            deltas.append({"tool_calls": [piece]})
    chunks = [{**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d}]} for d in deltas]
    chunks.append(
        {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    )
    chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
