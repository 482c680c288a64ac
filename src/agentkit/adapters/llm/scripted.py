"""A scripted LLM: replays a list of responses. Used by every test, the demo and the benchmarks."""

import copy
from collections.abc import AsyncIterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from agentkit.adapters.llm.fragments import fragments
from agentkit.application.errors import ConfigurationError, LLMError, LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema


class ScriptedToolCall(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A tool call in a script file; the id is made up when left out."""

    name: str
    arguments: dict[str, Any] = {}
    id: str | None = None


class ScriptedTurn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One response in a script file."""

    text: str = ""
    tool_calls: list[ScriptedToolCall] = []
    refusal: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def load_script(path: str | Path) -> list[LLMResponse]:
    """Read a script: a JSON array of turns `{text?, tool_calls?: [{name, arguments}], refusal?, ...}`.

    Raises:
        ConfigurationError: the file is missing or not a valid script (the message says where).
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"LLM_SCRIPT: cannot read {path}: {exc.strerror}") from None
    try:
        turns = msgspec.json.decode(raw, type=list[ScriptedTurn])
    except msgspec.DecodeError as exc:
        raise ConfigurationError(f"LLM_SCRIPT: {path} is not a valid script: {exc}") from None
    return [_to_response(turn, turn_no) for turn_no, turn in enumerate(turns, start=1)]


def _to_response(turn: ScriptedTurn, turn_no: int) -> LLMResponse:
    calls = tuple(
        ToolCall(id=ToolCallId(call.id or f"call-{turn_no}-{index}"), name=call.name, arguments=call.arguments)
        for index, call in enumerate(turn.tool_calls, start=1)
    )
    if turn.refusal is not None:
        finish = FinishReason.REFUSED
    elif calls:
        finish = FinishReason.TOOL_CALLS
    else:
        finish = FinishReason.STOP
    return LLMResponse(
        text=turn.text,
        tool_calls=calls,
        usage=Usage(input_tokens=turn.input_tokens, output_tokens=turn.output_tokens),
        finish_reason=finish,
        refusal=turn.refusal,
    )


class ScriptedFailure(msgspec.Struct, frozen=True, kw_only=True):
    """A scripted turn that fails, for tests of provider errors.

    `chat` raises (a copy of) `error`; `stream` first sends the first `fragments` fragments of
    `partial` (an answer the provider was writing when it broke), then raises it.
    """

    error: LLMError
    fragments: int = 0
    partial: LLMResponse = LLMResponse()


ScriptedTurnOutcome = LLMResponse | ScriptedFailure
"""What one scripted turn does: answer, or fail."""


class ScriptedLLMClient(LLMClient):
    """Answers each chat call with the next scripted response and records what it was sent.

    Sequential (the default): one script for the client's whole life, response after response.
    Per conversation: every run replays the script from its start, the response chosen by how
    many assistant turns the run has had since its goal; so a server answers concurrent runs alike
    (and a scripted failure repeats on every retry, since the conversation did not move).
    Once the script runs out it raises LLMRequestError, so a run that asks for more than the
    script holds fails with a clear reason instead of hanging.

    `stream` sends the response's text word by word and each call's arguments in pieces (see
    `fragments`), then the response, so tests and demos stream as with a real provider.
    """

    def __init__(
        self,
        responses: Sequence[ScriptedTurnOutcome],
        *,
        per_conversation: bool = False,
        provider: str = "scripted",
        model: str = "script",
    ) -> None:
        self._provider = provider
        self._model = model
        self._responses = list(responses)
        self._per_conversation = per_conversation
        self._next = 0
        self.requests: list[tuple[list[Message], list[ToolSchema]]] = []
        self.record_requests = True

    @property
    def provider(self) -> str:
        """`scripted`, unless the test plays a priced provider's model."""
        return self._provider

    @property
    def model(self) -> str:
        """`script` (scripts have no model), unless the test names one."""
        return self._model

    @classmethod
    def from_file(cls, path: str | Path, *, per_conversation: bool = False) -> "ScriptedLLMClient":
        """A client replaying the script in `path`."""
        return cls(load_script(path), per_conversation=per_conversation)

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The next scripted response (or the scripted failure's error)."""
        outcome = self._take(messages, tools)
        if isinstance(outcome, ScriptedFailure):
            raise copy.copy(outcome.error)
        return outcome

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """The next scripted response in fragments, then whole; a scripted failure breaks off after its fragments."""
        outcome = self._take(messages, tools)
        if isinstance(outcome, ScriptedFailure):
            for fragment in islice(fragments(outcome.partial), outcome.fragments):
                yield fragment
            raise copy.copy(outcome.error)
        for fragment in fragments(outcome):
            yield fragment
        yield outcome

    def _take(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> ScriptedTurnOutcome:
        if self.record_requests:
            self.requests.append((list(messages), list(tools)))
        index = _turns_since_goal(messages) if self._per_conversation else self._next
        if index >= len(self._responses):
            count = len(self._responses)
            raise LLMRequestError(f"the LLM script ran out after {count} {'response' if count == 1 else 'responses'}")
        self._next += 1
        return self._responses[index]

    @property
    def remaining(self) -> int:
        """Responses not yet used (sequential mode)."""
        return len(self._responses) - self._next


def _turns_since_goal(messages: Sequence[Message]) -> int:
    turns = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        turns += message.role == "assistant"
    return turns
