"""The LLMClient port: one call to a chat model with tools."""

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from agentkit.domain.messages import LLMResponse, Message
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

    async def aclose(self) -> None:
        """Release what the client holds (connections); called once, when the process stops.

        A default, not abstract: most test and demo clients hold nothing to release.
        """
        return None
