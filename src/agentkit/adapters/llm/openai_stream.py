"""Chat Completions chunks, as the SDK streams them, to fragments and to the completion `chat` would have read.

Pure: no SDK client, no I/O. `CompletionAssembler` takes the stream's chunks one by one, returns
the fragments each one carries, and at the end rebuilds the `ChatCompletion` the same answer would
have been without streaming, which `from_openai_completion` translates exactly as `chat` does.

What the chunks carry (OpenAI, vLLM, llama.cpp, Ollama, llama-cpp-python):
- `delta.content`: the text, in pieces;
- `delta.tool_calls`: pieces of calls, numbered by `index`. OpenAI sends a call's id, type and
  name on its first piece and its arguments in later ones; some servers send each call whole in
  one piece, some put `index` only on a call's first piece (a piece without one continues the
  call before), and some number every call 0 and tell them apart by id (a new id at an index
  starts a new call). A call's name is taken from its first piece that carries one;
- `delta.refusal`: the refusal, in pieces (it is not text: no fragment, the response carries it);
- `delta.function_call`: the pre-tools format; held back and sent as one fragment at the end,
  since servers that send it may send `tool_calls` beside it, which win (as in `chat`);
- `finish_reason` on the last chunk with a choice; with `stream_options.include_usage`, a last
  chunk without choices that carries the usage.

Tool calls written as text (LLM_TEXT_TOOL_CALLS): the text is held back while what has come so far
could still be calls (it starts with `{`, `[`, a code fence or `<tool_call>`), and goes out the
moment it cannot. At the end the held text goes out whole, or, when it was calls, the calls go out
instead; so the fragments always concatenate to the final response's text and arguments, and a
client never sees JSON that later turns out to have been a call.
"""

from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDeltaFunctionCall, ChoiceDeltaToolCall

from agentkit.adapters.llm.openai_translate import arguments_text
from agentkit.adapters.llm.text_tool_calls import DECIDING_CHARS, could_be_text_tool_calls
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, LLMResponse, TextDelta, ToolCallDelta


class _Call:
    """One tool call as its pieces come in."""

    __slots__ = ("arguments", "id", "name", "position")

    def __init__(self, position: int) -> None:
        self.position = position
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []


class CompletionAssembler:
    """Reads one streamed completion: the fragments as they come, the whole completion at the end.

    Args:
        hold_text: Hold the text back while it could still be tool calls written as text
            (LLM_TEXT_TOOL_CALLS with tools offered; see the module docstring).
    """

    def __init__(self, *, hold_text: bool = False) -> None:
        self._holding = hold_text
        self._held_for_good = False
        self._head: dict[str, Any] = {}
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._last_call: _Call | None = None
        self._function: dict[str, list[str]] = {}
        self._usage: Any = None
        self._finish_reason: str | None = None
        self._seen_choice = False

    @property
    def finished(self) -> bool:
        """Whether a chunk said why the answer ended (a stream that breaks off never does)."""
        return self._finish_reason is not None

    def feed(self, chunk: ChatCompletionChunk) -> list[LLMDelta]:
        """The fragments one chunk carries, in order (often one, sometimes none)."""
        if not self._head:
            self._head = {"id": chunk.id, "created": chunk.created, "model": chunk.model}
        if chunk.usage is not None:  # the last chunk's (some servers send a running total on every one)
            self._usage = chunk.usage
        out: list[LLMDelta] = []
        for choice in chunk.choices or ():
            if choice.index not in (0, None):  # one choice asked for (n=1): ignore any other
                continue
            self._seen_choice = True
            if choice.finish_reason is not None:
                self._finish_reason = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            if delta.content:
                self._add_text(delta.content, out)
            if delta.refusal:
                self._refusal.append(delta.refusal)
            for piece in delta.tool_calls or ():
                self._add_call_piece(piece, out)
            if delta.function_call is not None:
                self._add_function_piece(delta.function_call)
        return out

    def completion(self) -> ChatCompletion:
        """The completion the streamed answer amounts to, as `chat` would have read it."""
        choices: list[dict[str, Any]] = []
        if self._seen_choice:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": "".join(self._text) or None,
                "refusal": "".join(self._refusal) or None,
            }
            if self._calls:
                message["tool_calls"] = [self._call_json(call) for call in self._calls]
            if self._function:
                message["function_call"] = {
                    "name": "".join(self._function.get("name", ())),
                    "arguments": "".join(self._function.get("arguments", ())),
                }
            choices.append({"index": 0, "message": message, "finish_reason": self._finish_reason})
        return ChatCompletion.construct(
            object="chat.completion", choices=choices, usage=self._usage, **({"id": ""} | self._head)
        )

    def rest(self, response: LLMResponse) -> list[LLMDelta]:
        """The fragments still owed once the response is known: the held text, or the calls it was.

        Calls that did not stream as `tool_calls` pieces (read from the text, or from the legacy
        `function_call`) go out here, each whole in one fragment.
        """
        out: list[LLMDelta] = []
        if response.text and self._holding:
            out.append(TextDelta(text=response.text))
        if not self._calls:
            out.extend(
                ToolCallDelta(index=index, id=call.id, name=call.name, arguments=arguments_text(call))
                for index, call in enumerate(response.tool_calls)
            )
        return out

    def _add_text(self, piece: str, out: list[LLMDelta]) -> None:
        self._text.append(piece)
        if not self._holding:
            out.append(TextDelta(text=piece))
            return
        if self._held_for_good:
            return
        text = "".join(self._text)
        if not could_be_text_tool_calls(text):
            self._holding = False
            out.append(TextDelta(text=text))
        # Only the start decides; once it is long enough to have, the text is held to the end.
        self._held_for_good = self._holding and len(text.lstrip()) >= DECIDING_CHARS

    def _add_call_piece(self, piece: ChoiceDeltaToolCall, out: list[LLMDelta]) -> None:
        index = piece.index
        call = self._last_call if index is None else self._by_index.get(index)
        if call is None or (piece.id and call.id and piece.id != call.id):
            call = _Call(len(self._calls))
            self._calls.append(call)
            if index is not None:
                self._by_index[index] = call
        self._last_call = call
        new_id = piece.id if piece.id and call.id is None else None
        function = piece.function
        name = function.name if function is not None and function.name and call.name is None else None
        arguments = (function.arguments if function is not None else None) or ""
        if new_id:
            call.id = new_id
        if name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        if new_id or name or arguments:
            out.append(
                ToolCallDelta(
                    index=call.position, id=ToolCallId(new_id) if new_id else None, name=name, arguments=arguments
                )
            )

    def _add_function_piece(self, piece: ChoiceDeltaFunctionCall) -> None:
        if piece.name and "name" not in self._function:
            self._function["name"] = [piece.name]
        if piece.arguments:
            self._function.setdefault("arguments", []).append(piece.arguments)

    def _call_json(self, call: _Call) -> dict[str, Any]:
        # A server that never sent an id gets the one `chat` makes for a legacy call: unique per completion.
        call_id = call.id or f"call_{self._head.get('id', '')}_{call.position}"
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name or "", "arguments": "".join(call.arguments)},
        }
