"""The LLMClient port: one call to a chat model with tools."""

from abc import abstractmethod
from collections.abc import Sequence
from typing import Protocol

from agentkit.domain.messages import LLMResponse, Message
from agentkit.domain.tools import ToolSchema


class LLMClient(Protocol):
    """A chat model that may answer or call tools.

    Adapters translate the neutral messages and tool schemas to their provider's format and back.
    They raise `LLMRequestError` for requests the provider rejects (never retried) and
    `LLMUnavailable` when transient trouble outlives the retries; nothing else escapes.
    """

    @abstractmethod
    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """Send the conversation and the available tools; return the model's response."""
