"""MCP tools: what one call costs through AgentKit's registry, and how long a killed server takes to be back.

For the notes server (tests/mcp_servers/notes.py) over stdio and over Streamable HTTP on loopback:

1. `calls`: CALLS sequential calls of `notes_shout` through `ToolRegistry.execute` (argument check,
   timeout, truncation, the SDK's client, the server and back): p50 and p95 latency;
2. `restart`: the server killed (SIGKILL) while idle, then calls retried until one succeeds: the
   time from the kill to the first successful call, which the connection's check (MCP_PING_INTERVAL_S,
   here 0.5 s) or the first failing call starts.

Run: `.venv/bin/python bench/mcp_tools.py [--calls 500]`.
"""

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from agentkit.adapters.mcp import McpServerConnection, McpTarget
from agentkit.application.tools import ToolRegistry
from agentkit.application.tools.context import ToolContext
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall

NOTES = Path(__file__).parents[1] / "tests" / "mcp_servers" / "notes.py"
CONTEXT = ToolContext(run_id=RunId("bench"), owner=OwnerId("bench"), session_id=None)


async def measure(name: str, target: McpTarget, calls: int, kill: "Kill") -> None:
    connection = McpServerConnection("notes", target, prefix="notes_", ping_interval_s=0.5, restart_max_delay_s=0.5)
    connection.start()
    assert await connection.wait_up(60), "the server did not come up"
    registry = ToolRegistry(connection.tools())
    call = ToolCall(id=ToolCallId("c"), name="notes_shout", arguments={"text": "hello"})
    latencies = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await registry.execute(call, CONTEXT)
        latencies.append((time.perf_counter() - started) * 1000)
        assert result.ok, result.error
    quantiles = statistics.quantiles(latencies, n=20)
    pid_result = await registry.execute(ToolCall(id=ToolCallId("p"), name="notes_server_pid", arguments={}), CONTEXT)
    killed_at = time.perf_counter()
    await kill(int(pid_result.output))
    failed = 0
    while not (await registry.execute(call, CONTEXT)).ok:
        failed += 1
        await asyncio.sleep(0.01)
    back_s = time.perf_counter() - killed_at
    print(
        f"{name:6} calls={calls} p50={quantiles[9]:.2f} ms p95={quantiles[18]:.2f} ms; "
        f"killed -> next successful call {back_s:.2f} s ({failed} failed calls meanwhile)"
    )
    await connection.aclose()


class Kill:
    """Kills the server; for HTTP, also starts it again (nobody else would)."""

    def __init__(self, restart: "HttpServer | None" = None) -> None:
        self._restart = restart

    async def __call__(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        if self._restart is not None:
            self._restart.process.wait()
            self._restart.start()


class HttpServer:
    """The notes server over Streamable HTTP as a subprocess."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[bytes] = self.start()

    def start(self) -> "subprocess.Popen[bytes]":
        self.process = subprocess.Popen(  # noqa: S603 - our own test server
            [sys.executable, str(NOTES), "--http", str(self.port)], stderr=subprocess.DEVNULL
        )
        return self.process


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--port", type=int, default=18931)
    args = parser.parse_args()
    await measure("stdio", McpTarget(command=sys.executable, args=[str(NOTES)]), args.calls, Kill())
    http = HttpServer(args.port)
    try:
        await measure("http", McpTarget(url=f"http://127.0.0.1:{args.port}/mcp"), args.calls, Kill(http))
    finally:
        http.process.kill()


if __name__ == "__main__":
    asyncio.run(main())
