"""A tool that holds a run in flight until it is cancelled (AGENTKIT_TOOL_MODULES=tests.blocking_tools)."""

import asyncio

from agentkit.application.tools import tool


@tool
async def hold() -> str:
    """Wait a very long time (tests stop the server meanwhile)."""
    await asyncio.sleep(3600)
    return "released"
