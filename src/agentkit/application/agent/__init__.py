"""The agent loop: the I/O around the pure loop policy."""

from agentkit.application.agent.config import DEFAULT_SYSTEM_PROMPT, AgentConfig
from agentkit.application.agent.loop import AgentLoop

__all__ = ["DEFAULT_SYSTEM_PROMPT", "AgentConfig", "AgentLoop"]
