"""The Vercel AI SDK's UI message stream as its client reads it, to check AgentKit's `format=vercel` against.

Written from the AI SDK's own source (github.com/vercel/ai, `ai` 7.0.77), not from AgentKit's code:
- CHUNKS: `uiMessageChunkSchema` (packages/ai/src/ui-message-stream/ui-message-chunks.ts): each chunk
  kind's required and optional fields (zod `looseObject`s: other fields are allowed);
- `read_message`: what `processUIMessageStream` (packages/ai/src/ui/process-ui-message-stream.ts)
  makes of the chunks we send: the assistant message's parts, and its errors where the client throws.
"""

from typing import Any

_STR, _BOOL, _OBJ, _ANY = str, bool, dict, object

# kind -> (required fields, optional fields), each a field -> type
CHUNKS: dict[str, tuple[dict[str, type], dict[str, type]]] = {
    "text-start": ({"id": _STR}, {"providerMetadata": _OBJ}),
    "text-delta": ({"id": _STR, "delta": _STR}, {"providerMetadata": _OBJ}),
    "text-end": ({"id": _STR}, {"providerMetadata": _OBJ}),
    "error": ({"errorText": _STR}, {}),
    "tool-input-start": (
        {"toolCallId": _STR, "toolName": _STR},
        {"providerExecuted": _BOOL, "providerMetadata": _OBJ, "toolMetadata": _OBJ, "dynamic": _BOOL, "title": _STR},
    ),
    "tool-input-delta": ({"toolCallId": _STR, "inputTextDelta": _STR}, {}),
    "tool-input-available": (
        {"toolCallId": _STR, "toolName": _STR, "input": _ANY},
        {"providerExecuted": _BOOL, "providerMetadata": _OBJ, "toolMetadata": _OBJ, "dynamic": _BOOL, "title": _STR},
    ),
    "tool-output-available": (
        {"toolCallId": _STR, "output": _ANY},
        {"providerExecuted": _BOOL, "providerMetadata": _OBJ, "dynamic": _BOOL, "preliminary": _BOOL},
    ),
    "tool-output-error": ({"toolCallId": _STR, "errorText": _STR}, {"providerExecuted": _BOOL, "dynamic": _BOOL}),
    "start-step": ({}, {}),
    "finish-step": ({}, {}),
    "reset-step": ({}, {}),
    "start": ({}, {"messageId": _STR, "messageMetadata": _ANY}),
    "finish": ({}, {"finishReason": _STR, "messageMetadata": _ANY}),
    "abort": ({}, {"reason": _STR}),
    "message-metadata": ({"messageMetadata": _ANY}, {}),
}
FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


def check_chunk(chunk: Any) -> None:
    """Raise AssertionError if the AI SDK's schema would refuse the chunk (its parse fails: useChat errors)."""
    assert isinstance(chunk, dict), chunk
    kind = chunk.get("type")
    if isinstance(kind, str) and kind.startswith("data-"):
        assert "data" in chunk, chunk
        assert isinstance(chunk.get("id", ""), str), chunk
        return
    assert kind in CHUNKS, f"no chunk kind {kind!r} in the AI SDK"
    required, optional = CHUNKS[kind]
    for name, expected in required.items():
        assert name in chunk, f"{kind}: {name} missing"
        assert isinstance(chunk[name], expected), f"{kind}: {name} is not {expected.__name__}"
    for name, expected in optional.items():
        if name in chunk:
            assert isinstance(chunk[name], expected), f"{kind}: {name} is not {expected.__name__}"
    if kind == "finish" and "finishReason" in chunk:
        assert chunk["finishReason"] in FINISH_REASONS, chunk


def read_message(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message `useChat` builds from the chunks (its id, metadata, parts, errors, finish reason).

    Raises:
        AssertionError: where the AI SDK's client throws (a delta for a part never started, say).
    """
    parts: list[dict[str, Any]] = []
    message: dict[str, Any] = {"id": None, "metadata": None, "parts": parts, "errors": [], "finish_reason": None}
    texts: dict[str, dict[str, Any]] = {}
    partial: dict[str, str] = {}

    def step_parts() -> list[dict[str, Any]]:
        start = max((i for i, part in enumerate(parts) if part["type"] == "step-start"), default=-1)
        return parts[start + 1 :]

    def tool_part(call_id: str) -> dict[str, Any]:
        found: dict[str, Any] | None = next((p for p in reversed(parts) if p.get("toolCallId") == call_id), None)
        if found is not None:
            return found
        raise AssertionError(f"no tool invocation found for tool call id {call_id!r}")

    def update_tool(call_id: str, name: str, **fields: Any) -> None:
        found = next((p for p in step_parts() if p.get("toolCallId") == call_id), None)
        if found is None:
            found = {"type": f"tool-{name}", "toolCallId": call_id}
            parts.append(found)
        found.update(fields)

    for chunk in chunks:
        check_chunk(chunk)
        kind = chunk["type"]
        if kind == "start":
            message["id"] = chunk.get("messageId", message["id"])
            message["metadata"] = chunk.get("messageMetadata", message["metadata"])
        elif kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind == "finish-step":
            texts.clear()
        elif kind == "reset-step":
            current = step_parts()
            del parts[len(parts) - len(current) :]
            texts.clear()
            partial.clear()
        elif kind == "text-start":
            texts[chunk["id"]] = {"type": "text", "text": "", "state": "streaming"}
            parts.append(texts[chunk["id"]])
        elif kind == "text-delta":
            assert chunk["id"] in texts, f"text-delta for missing text part {chunk['id']!r}"
            texts[chunk["id"]]["text"] += chunk["delta"]
        elif kind == "text-end":
            assert chunk["id"] in texts, f"text-end for missing text part {chunk['id']!r}"
            texts.pop(chunk["id"])["state"] = "done"
        elif kind == "tool-input-start":
            partial[chunk["toolCallId"]] = ""
            update_tool(chunk["toolCallId"], chunk["toolName"], state="input-streaming", input=None)
        elif kind == "tool-input-delta":
            assert chunk["toolCallId"] in partial, f"tool-input-delta for missing call {chunk['toolCallId']!r}"
            partial[chunk["toolCallId"]] += chunk["inputTextDelta"]
        elif kind == "tool-input-available":
            update_tool(chunk["toolCallId"], chunk["toolName"], state="input-available", input=chunk["input"])
        elif kind == "tool-output-available":
            tool_part(chunk["toolCallId"]).update(state="output-available", output=chunk["output"])
        elif kind == "tool-output-error":
            tool_part(chunk["toolCallId"]).update(state="output-error", errorText=chunk["errorText"])
        elif kind == "error":
            message["errors"].append(chunk["errorText"])
        elif kind == "finish":
            message["finish_reason"] = chunk.get("finishReason")
        elif kind.startswith("data-"):
            parts.append({"type": kind, "id": chunk.get("id"), "data": chunk["data"]})
    return message
