"""A scripted model that streams each answer in the pieces a test gives, optionally one piece at a time.

Paced, it waits after each fragment (and before the whole response) until the test says `go()`:
a test that calls it for each fragment it receives reads every fragment before the next is
written, and before the step that holds them all is stored (which drops them from the event log).
"""

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeAlias

import msgspec

from agentkit.application.errors import LLMError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, ToolCall, ToolCallDelta, Usage
from agentkit.domain.tools import ToolSchema

Turn: TypeAlias = tuple[list[LLMDelta], LLMResponse | LLMError]


def text_turn(text: str) -> Turn:
    """An answer streamed in the pieces `text` marks with `|`."""
    pieces = text.split("|")
    answer = "".join(pieces)
    return [TextDelta(text=piece) for piece in pieces], LLMResponse(
        text=answer, usage=Usage(input_tokens=10, output_tokens=len(pieces))
    )


def broken_turn(text: str, error: LLMError) -> Turn:
    """An answer streamed in the pieces `text` marks with `|`, then the stream breaks off with `error`."""
    return [TextDelta(text=piece) for piece in text.split("|")], error


def call_turn(call_id: str, name: str, pieces: Sequence[str]) -> Turn:
    """One tool call, its arguments JSON streamed in `pieces` (joined, they are the arguments)."""
    arguments: dict[str, Any] = msgspec.json.decode("".join(pieces))
    first, *rest = pieces
    fragments: list[LLMDelta] = [ToolCallDelta(index=0, id=ToolCallId(call_id), name=name, arguments=first)]
    fragments += [ToolCallDelta(index=0, arguments=piece) for piece in rest]
    call = ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments)
    return fragments, LLMResponse(tool_calls=(call,), usage=Usage(input_tokens=10, output_tokens=len(pieces)))


class StreamingLLM(LLMClient):
    """Answers with the scripted turns, in order, each streamed in its pieces; records what it was sent."""

    def __init__(self, turns: Sequence[Turn], *, paced: bool = False) -> None:
        self._turns = list(turns)
        self._paced = paced
        self._go: asyncio.Queue[None] = asyncio.Queue()
        self.streams = 0
        self.chats = 0
        self.requests: list[list[Message]] = []

    @property
    def provider(self) -> str:
        return "test"

    @property
    def model(self) -> str:
        return "streaming"

    def go(self) -> None:
        """Paced: let the next fragment (or, after the last, the whole response) out."""
        self._go.put_nowait(None)

    def free(self) -> None:
        """Stop pacing: the rest comes at once."""
        self._paced = False
        self._go.put_nowait(None)

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        self.chats += 1
        self.requests.append(list(messages))
        outcome = self._turns.pop(0)[1]
        if isinstance(outcome, LLMError):
            raise outcome
        return outcome

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        self.streams += 1
        self.requests.append(list(messages))
        fragments, outcome = self._turns.pop(0)
        for fragment in fragments:
            yield fragment
            if self._paced:
                await self._go.get()
        if isinstance(outcome, LLMError):
            raise outcome
        yield outcome
