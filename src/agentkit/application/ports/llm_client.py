"""The LLMClient port: one call to a chat model with tools."""

from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, ToolCallDelta
from agentkit.domain.tools import ToolSchema


@runtime_checkable
class LLMClient(Protocol):
    """A chat model that may answer or call tools.

    Adapters translate the neutral messages and tool schemas to their provider's format and back.
    They raise `LLMRequestError` for requests the provider rejects (never retried) and
    `LLMUnavailable` when transient trouble outlives the retries; nothing else escapes.
    """

    @property
    @abstractmethod
    def provider(self) -> str:
        """The provider's name, as LLM_PROVIDER spells it (logs, traces and metrics name it)."""

    @property
    @abstractmethod
    def model(self) -> str:
        """The model every request names."""

    @property
    def parameters(self) -> dict[str, Any]:
        """The sampling parameters every request sends (temperature, max_tokens), for the trace.

        A default, not abstract: a client that sends none has none. Never keys or headers.
        """
        return {}

    @abstractmethod
    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send the conversation and the available tools; return the model's response."""

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """The model's response as it is written: text and tool-call fragments, in order, then the whole response.

        The last item is the complete `LLMResponse`, exactly what `chat` would have returned (the
        whole text, the calls with their parsed arguments, usage, finish reason): the fragments are
        for showing the answer while it comes, the response is what is stored. Errors are those of
        `chat`; one raised after a fragment was yielded ends the stream (nothing is retried then).

        A default, not abstract: a client that cannot stream (a plug-in) answers with `chat` and
        yields the whole text as one fragment, and each call's arguments as one.
        """
        response = await self.chat(messages, tools)
        if response.text:
            yield TextDelta(text=response.text)
        for index, call in enumerate(response.tool_calls):
            yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=_json(call.arguments))
        yield response

    async def aclose(self) -> None:
        """Release what the client holds (connections); called once, when the process stops.

        A default, not abstract: most test and demo clients hold nothing to release.
        """
        return None


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def stream_of(
    llm: LLMClient, messages: Sequence[Message], tools: Sequence[ToolSchema]
) -> AsyncIterator[LLMDelta | LLMResponse]:
    """`llm.stream(...)`, also for a client that implements the port without subclassing it (no `stream`)."""
    if isinstance(llm, LLMClient) and hasattr(type(llm), "stream"):
        return llm.stream(messages, tools)
    return LLMClient.stream(llm, messages, tools)
