"""Agents files and MCP servers for the tests: the notes server over stdio or Streamable HTTP, on loopback."""

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from agentkit.adapters.mcp import McpServerConnection
from agentkit.entrypoints.wiring.providers.agents import McpServers
from tests.http_fixtures import ApiClient

NOTES_SERVER = Path(__file__).parent / "mcp_servers" / "notes.py"


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stdio_notes_server(pid_file: Path) -> str:
    """The agents file's table for the notes server over stdio (it writes its pid to `pid_file` in `hold`)."""
    return (
        "[mcp_servers.notes]\n"
        f"command = {str(sys.executable)!r}\n"
        f"args = [{str(NOTES_SERVER)!r}]\n"
        f'env = {{ NOTES_PID_FILE = "{pid_file}" }}\n'
        "timeout_s = 60\n"
    )


def http_notes_server(port: int) -> str:
    """The agents file's table for the notes server over Streamable HTTP on `port`."""
    return (
        "[mcp_servers.notes]\n"
        f'url = "http://127.0.0.1:{port}/mcp"\n'
        'headers = { "X-Test" = "notes" }\n'
        "timeout_s = 60\n"
    )


class HttpNotesServer:
    """The notes server over Streamable HTTP, as a process of its own the test can kill and start again."""

    def __init__(self, port: int, pid_file: Path) -> None:
        self.port = port
        self.pid_file = pid_file
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until its port answers."""
        env = {**os.environ, "NOTES_PID_FILE": str(self.pid_file)}
        self.process = subprocess.Popen(  # noqa: S603 - our own test server
            [sys.executable, str(NOTES_SERVER), "--http", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            if self.process.poll() is not None:
                raise RuntimeError("the notes server exited at start")
            time.sleep(0.05)
        raise RuntimeError("the notes server did not listen within 30 s")

    def stop(self) -> None:
        """Kill it (SIGKILL: no goodbye to its clients)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None


@contextlib.contextmanager
def http_notes(port: int, pid_file: Path) -> Iterator[HttpNotesServer]:
    """The HTTP notes server, started, and killed at the end."""
    server = HttpNotesServer(port, pid_file)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def mcp_server_up(api: ApiClient, name: str, timeout_s: float = 60.0) -> None:
    """Wait until the app's connection to MCP server `name` is up."""
    servers = await api.app.state.dishka_container.get(McpServers)
    assert await servers.connections[name].wait_up(timeout_s), f"the MCP server {name!r} did not come up"


async def mcp_connections(api: ApiClient, name: str) -> int:
    """How many times the app connected to MCP server `name` so far."""
    servers = await api.app.state.dishka_container.get(McpServers)
    connection = servers.connections[name]
    assert isinstance(connection, McpServerConnection)
    return connection.connections


async def kill_pid_in(pid_file: Path, timeout_s: float = 60.0) -> int:
    """Wait (without blocking the loop) for the pid the server wrote in `hold`, then SIGKILL it; return the pid."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text(encoding="utf-8"))  # noqa: ASYNC240 - a few bytes, polled
            os.kill(pid, signal.SIGKILL)
            pid_file.unlink()  # noqa: ASYNC240
            return pid
        await asyncio.sleep(0.02)
    raise AssertionError("the MCP server never wrote its pid")
