"""Tool calls a model wrote as JSON text instead of structured `tool_calls` (opt-in: LLM_TEXT_TOOL_CALLS).

Served with its own chat template, a small model often writes its tool call into the answer's
text and the server passes it on as text: llama-cpp-python with Qwen2.5-Coder's template answers
`content: '{"name": "calculator", "arguments": {"expression": "(17 * 23)"}}'` with
`finish_reason: "stop"` and no `tool_calls` (recorded). Read as an answer, the run would
"succeed" with that JSON as its answer; read as a call, the run goes on.

A guess about text is only safe when it is narrow, so the text counts as tool calls only when
all of it is calls, each naming a tool that was offered:
- one JSON object `{"name": ..., "arguments": {...}}` (`"parameters"` for `"arguments"`, as
  Llama 3 writes it; arguments may also be a JSON string), or a JSON array of them;
- the same inside a Markdown code fence, or inside one or more `<tool_call>...</tool_call>`
  tags (the Hermes and Qwen format), with nothing but white space around them.
Anything else (prose around the JSON, an unknown name, other keys) stays an answer.
"""

import json
import re
from collections.abc import Collection
from typing import Any

_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
_ARGUMENT_KEYS = ("arguments", "parameters")
_ALLOWED_KEYS = frozenset({"name", "type", *_ARGUMENT_KEYS})
_OPENINGS = ("```", "<tool_call>")
DECIDING_CHARS = max(len(opening) for opening in _OPENINGS)
"""How much of an answer's start (white space left out) `could_be_text_tool_calls` needs to be sure."""

TextCall = tuple[str, dict[str, Any] | str]
"""A tool's name and its arguments: an object, or the JSON text the model wrote for them."""


def find_text_tool_calls(text: str, tool_names: Collection[str]) -> list[TextCall]:
    """The tool calls `text` consists of, in order; empty when it is an answer after all.

    Args:
        text: The assistant's text.
        tool_names: The tools offered in the request; a call must name one of them.
    """
    pieces = _json_pieces(text.strip())
    calls: list[TextCall] = []
    for piece in pieces:
        try:
            # strict=False: the same servers put raw newlines inside strings (see parse_arguments)
            value = json.loads(piece, strict=False)
        except json.JSONDecodeError:
            return []
        for item in value if isinstance(value, list) else [value]:
            call = _text_call(item, tool_names)
            if call is None:
                return []
            calls.append(call)
    return calls


def could_be_text_tool_calls(text: str) -> bool:
    """Whether `text`, the start of an answer, may still turn out to be tool calls once it is whole.

    A stream holds the text back while this is true (nothing but white space yet, or a start
    `find_text_tool_calls` would read: `{`, `[`, a code fence, a `<tool_call>` tag).
    """
    start = text.lstrip()
    if not start or start[0] in "{[":
        return True
    return any(start.startswith(opening) or opening.startswith(start) for opening in _OPENINGS)


def _json_pieces(text: str) -> list[str]:
    if not text:
        return []
    tagged = _TAGGED.findall(text)
    if tagged:
        return [piece.strip() for piece in tagged] if not _TAGGED.sub("", text).strip() else []
    fenced = _FENCED.fullmatch(text)
    if fenced:
        return [fenced.group(1)]
    return [text] if text[0] in "{[" else []


def _text_call(item: Any, tool_names: Collection[str]) -> TextCall | None:
    if not isinstance(item, dict) or not set(item) <= _ALLOWED_KEYS:
        return None
    name = item.get("name")
    if not isinstance(name, str) or name not in tool_names or item.get("type", "function") != "function":
        return None
    given = [item[key] for key in _ARGUMENT_KEYS if key in item]
    if len(given) > 1:
        return None
    arguments = given[0] if given else {}
    if not isinstance(arguments, dict | str):
        return None
    return name, arguments
