"""Messages API stream events to fragments, and to the message `chat` would have read.

Pure: no SDK client, no I/O. `MessageAssembler` takes the stream's events one by one (the SDK's
`RawMessageStreamEvent`s) and returns the fragments each carries; at the end it rebuilds the
message the same answer would have been without streaming, which `from_anthropic_message`
translates exactly as `chat` does.

What the events carry (Anthropic's documented stream):
- `message_start`: the message's id, model and first usage (input and cache tokens);
- `content_block_start` with a `text` block or a `tool_use` block (its id and name, empty input);
- `content_block_delta`: `text_delta` pieces of a text block, `input_json_delta` pieces
  (`partial_json`) of a call's input; thinking and signature deltas are never sent on;
- `content_block_stop`: the block is whole;
- `message_delta`: the stop reason (and stop details of a refusal) and the cumulative usage;
- `message_stop`: the end. `ping` events come between; an `error` event is raised by the SDK.

Calls are numbered in the order their `tool_use` blocks start (`ToolCallDelta.index`), not by the
block index, which counts text blocks too.
"""

import json
from types import SimpleNamespace
from typing import Any

from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, TextDelta, ToolCallDelta


class _Block:
    """One content block as its pieces come in."""

    __slots__ = ("call_no", "id", "kind", "name", "pieces")

    def __init__(self, kind: str, *, id: str = "", name: str = "", call_no: int = -1) -> None:
        self.kind = kind
        self.id = id
        self.name = name
        self.call_no = call_no
        self.pieces: list[str] = []


class MessageAssembler:
    """Reads one streamed message: the fragments as they come, the whole message at the end."""

    def __init__(self) -> None:
        self._head: dict[str, Any] = {"id": None, "model": None}
        self._usage: dict[str, int | None] = {}
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self._stop_reason: str | None = None
        self._stop_details: Any = None
        self._stopped = False

    @property
    def finished(self) -> bool:
        """Whether the stream said why the answer ended (one that breaks off never does)."""
        return self._stop_reason is not None

    def feed(self, event: Any) -> list[LLMDelta]:
        """The fragments one event carries, in order (one or none)."""
        kind = getattr(event, "type", None)
        if kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        if kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "message_start":
            message = event.message
            self._head = {"id": message.id, "model": message.model}
            self._add_usage(message.usage)
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason or self._stop_reason
            self._stop_details = getattr(event.delta, "stop_details", None) or self._stop_details
            self._add_usage(event.usage)
        elif kind == "message_stop":
            self._stopped = True
        return []

    def message(self) -> Any:
        """The message the streamed answer amounts to, as `chat` would have read it (duck-typed like the SDK's)."""
        content: list[Any] = []
        for _, block in sorted(self._blocks.items()):
            text = "".join(block.pieces)
            if block.kind == "text":
                content.append(SimpleNamespace(type="text", text=text))
            elif block.kind == "tool_use":
                content.append(SimpleNamespace(type="tool_use", id=block.id, name=block.name, input=_input(text)))
        return SimpleNamespace(
            id=self._head["id"],
            model=self._head["model"],
            content=content,
            stop_reason=self._stop_reason,
            stop_details=self._stop_details,
            usage=SimpleNamespace(**self._usage),
        )

    def _start(self, index: int, block: Any) -> None:
        kind = getattr(block, "type", "")
        if kind == "tool_use":
            self._blocks[index] = _Block(kind, id=block.id, name=block.name, call_no=self._calls)
            self._calls += 1
        elif kind == "text":
            self._blocks[index] = _Block(kind)
            if block.text:  # the start carries "" in Anthropic's stream; a proxy may put text in it
                self._blocks[index].pieces.append(block.text)
        # thinking and server-tool blocks are not part of the neutral response

    def _delta(self, index: int, delta: Any) -> list[LLMDelta]:
        block = self._blocks.get(index)
        kind = getattr(delta, "type", None)
        if block is None:
            return []
        if kind == "text_delta" and block.kind == "text":
            block.pieces.append(delta.text)
            return [TextDelta(text=delta.text)] if delta.text else []
        if kind == "input_json_delta" and block.kind == "tool_use":
            first = not block.pieces
            block.pieces.append(delta.partial_json)
            if first:
                return [
                    ToolCallDelta(
                        index=block.call_no, id=ToolCallId(block.id), name=block.name, arguments=delta.partial_json
                    )
                ]
            return [ToolCallDelta(index=block.call_no, arguments=delta.partial_json)] if delta.partial_json else []
        return []

    def rest(self) -> list[LLMDelta]:
        """The first fragment of each call that got no `input_json_delta` (a call without arguments)."""
        return [
            ToolCallDelta(index=block.call_no, id=ToolCallId(block.id), name=block.name, arguments="{}")
            for _, block in sorted(self._blocks.items())
            if block.kind == "tool_use" and not block.pieces
        ]

    def _add_usage(self, usage: Any) -> None:
        # message_delta's usage is cumulative: a value it gives replaces message_start's
        for field in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = getattr(usage, field, None)
            if value is not None:
                self._usage[field] = value


def _input(text: str) -> Any:
    """A call's input from its pieces: the object they spell, {} for none, else the text as it was."""
    if not text.strip():
        return {}
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        return text  # from_anthropic_message turns it into arguments_error
