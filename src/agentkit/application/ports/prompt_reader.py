"""The PromptReader port: the messages and tool sets a run's LLM calls sent."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId
from agentkit.domain.steps import RunPrompts


class PromptReader(Protocol):
    """Reads back what a run's LLM calls sent (the trace sinks store it with the LLM steps)."""

    @abstractmethod
    async def prompts(self, run_id: RunId) -> RunPrompts:
        """The run's stored messages in order and its tool sets by digest (empty for an unknown run)."""
