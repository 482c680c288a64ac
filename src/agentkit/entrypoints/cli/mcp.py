"""`agentkit mcp`: AgentKit's agents as the tools of an MCP server over stdio (the root serves it)."""

import argparse

from agentkit.entrypoints.cli.root import CommandRoot


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `mcp` to the parser."""
    mcp = sub.add_parser("mcp", help="serve the agents as MCP tools over stdio (for IDEs and desktop assistants)")
    mcp.set_defaults(handler=mcp_command)


async def mcp_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """Serve until the MCP client closes stdin."""
    await root.serve_mcp()
    return 0
