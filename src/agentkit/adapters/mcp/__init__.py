"""MCP servers' tools for AgentKit's agents, through the official `mcp` SDK."""

from agentkit.adapters.mcp.connection import McpServerConnection, McpState, McpTarget

__all__ = ["McpServerConnection", "McpState", "McpTarget"]
