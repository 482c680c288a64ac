"""The fake's Anthropic Messages API: `POST /v1/messages`, whole or streamed as typed events.

It also plays Anthropic's prompt cache, for a `Reply` whose usage is left to it: the prefix up to
each `cache_control` breakpoint (tools, then system, then messages, in that order) is written to
the cache the first time it is sent and read from it every time after, so a run's second turn
reports the first turn's prefix as `cache_read_input_tokens`. Tokens are counted as characters
of the prefix's JSON over four, which is all a fake needs.
"""

import json
from typing import Any

from agentkit.testing.llm_conformance.answers import Failure, FakeUsage, Reply
from agentkit.testing.llm_conformance.loopback import RecordedRequest, Rendered, SentResult, WireFormat, text_pieces

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "refusal": "refusal", "length": "max_tokens"}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class AnthropicWire(WireFormat):
    """Messages as Anthropic sends them: `tool_use` blocks, `input_json_delta` pieces, a `refusal` stop."""

    def __init__(self, model: str = "claude-sonnet-5-5") -> None:
        self.model = model
        self.cached: set[str] = set()  # the prefixes written to the fake's prompt cache

    def wants_stream(self, request: RecordedRequest) -> bool:
        """`stream: true` in the body."""
        return bool((request.body or {}).get("stream"))

    def render(self, answer: Reply | Failure, request: RecordedRequest, *, stream: bool) -> Rendered:
        """A message, its events (`message_start` ... `message_stop`), or an error body."""
        if isinstance(answer, Failure):
            kind = _ERROR_TYPES.get(answer.status, "api_error")
            body = {"type": "error", "error": {"type": kind, "message": answer.message}}
            return Rendered(status=answer.status, headers=answer.headers, body=body)
        usage = _usage(answer.usage if answer.usage is not None else self.count(request.body or {}))
        stop = "tool_use" if answer.calls and answer.stop != "length" else _STOP[answer.stop]
        content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments if c.raw_arguments is None else {}}
            for c in answer.calls
        ]
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if answer.stop == "refusal":
            message["stop_details"] = {"type": "refusal", "category": None, "explanation": answer.refusal}
        if not stream:
            if any(call.raw_arguments is not None for call in answer.calls):
                # a whole message always carries an object; only a stream's pieces can fail to parse
                message["content"] = [b if b["type"] != "tool_use" else {**b, "input": "oops"} for b in content]
            return Rendered(body=message)
        return Rendered(events=_events(message, answer))

    def count(self, body: dict[str, Any]) -> FakeUsage:
        """The request's tokens, its prompt cache played: what earlier requests cached is read, the rest written."""
        every, marked = _prefixes(body)
        total = _tokens(json.dumps([body.get("tools"), body.get("system"), body.get("messages")]))
        # Anthropic looks for a cached prefix at the block boundaries before each breakpoint too,
        # so the last turn's breakpoint is found though this turn's breakpoint moved on
        read = max((_tokens(p) for p in every if p in self.cached), default=0)
        longest = max((_tokens(p) for p in marked), default=0)
        self.cached.update(marked)
        return FakeUsage(
            input_tokens=max(total, longest),
            output_tokens=12,
            cache_read_tokens=read,
            cache_write_tokens=max(longest - read, 0),
        )

    def tool_results(self, request: RecordedRequest) -> list[SentResult]:
        """The `tool_result` blocks of the user messages, by `tool_use_id`, with `is_error`."""
        results: list[SentResult] = []
        for message in (request.body or {}).get("messages", ()):
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_result":
                    text = block.get("content")
                    if isinstance(text, list):
                        text = "".join(part.get("text", "") for part in text)
                    results.append(
                        SentResult(
                            call_id=block.get("tool_use_id"), text=str(text or ""), is_error=bool(block.get("is_error"))
                        )
                    )
        return results


def _usage(usage: FakeUsage) -> dict[str, Any]:
    # Anthropic's input_tokens leaves out what was read from or written to the cache
    return {
        "input_tokens": usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _prefixes(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The request's prefix up to each block, and up to each of its cache breakpoints, as JSON text."""
    every: list[str] = []
    prefixes: list[str] = []
    seen: list[Any] = []
    for section in ("tools", "system", "messages"):
        items = body.get(section)
        if not isinstance(items, list):
            continue
        for item in items:
            blocks = item.get("content") if section == "messages" else [item]
            for block in blocks if isinstance(blocks, list) else ():
                seen.append(_without_marks(block))
                every.append(json.dumps(seen))
                if isinstance(block, dict) and "cache_control" in block:
                    prefixes.append(every[-1])
    return every, prefixes


def _without_marks(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def _tokens(text: str) -> int:
    return len(text) // 4


def _events(message: dict[str, Any], answer: Reply) -> list[str]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    start.pop("stop_details", None)
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(_block_start(index, {"type": "text", "text": ""}))
            events += [_delta(index, {"type": "text_delta", "text": piece}) for piece in text_pieces(block["text"])]
        else:
            events.append(_block_start(index, {**block, "input": {}}))
            call = next(c for c in answer.calls if c.id == block["id"])
            arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
            pieces = [""] + [arguments[at : at + 7] for at in range(0, len(arguments), 7)]
            events += [_delta(index, {"type": "input_json_delta", "partial_json": piece}) for piece in pieces]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta: dict[str, Any] = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    if "stop_details" in message:
        delta["stop_details"] = message["stop_details"]
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events]


def _block_start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
