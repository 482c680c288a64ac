"""AgentKit as an MCP server (`agentkit mcp`): each agent an MCP tool, for IDEs and desktop assistants."""

from agentkit.entrypoints.mcp.server import agent_tools_server, serve_stdio

__all__ = ["agent_tools_server", "serve_stdio"]
