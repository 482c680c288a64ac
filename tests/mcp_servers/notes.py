"""A small MCP server written with the SDK's MCPServer (FastMCP in mcp 1.x), for the tests to start.

    python tests/mcp_servers/notes.py                 # over stdio
    python tests/mcp_servers/notes.py --http PORT     # over Streamable HTTP on 127.0.0.1:PORT/mcp

`hold` writes the server's pid to NOTES_PID_FILE (when set) and waits, so a test can kill the
server while a call is in flight.
"""

import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def shout(text: str) -> str:
    """Say the text in capitals."""
    return text.upper()


@server.tool()
def word_count(text: str, minimum_length: int = 1) -> int:
    """Count the words of the text that are at least `minimum_length` characters long."""
    return sum(1 for word in text.split() if len(word) >= minimum_length)


@server.tool()
async def hold(text: str) -> str:
    """Wait a long time, then echo the text (tests kill the server meanwhile)."""
    pid_file = os.environ.get("NOTES_PID_FILE")
    if pid_file:
        Path(pid_file).write_text(str(os.getpid()), encoding="utf-8")  # noqa: ASYNC240 - a few bytes
    await asyncio.sleep(600)
    return text


@server.tool()
def server_pid() -> int:
    """The server process's id."""
    return os.getpid()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
    else:
        server.run()
