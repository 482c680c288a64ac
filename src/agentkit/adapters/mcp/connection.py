"""McpServerConnection: one MCP server, connected in a task of its own and reconnected when it dies.

The connection is started with the service and never fails it: a server that cannot be reached
is retried with a growing pause (capped), and meanwhile its tools answer with a tool error that
says the server is unavailable. A server that dies is noticed by the call that meets the broken
connection or by the next ping, whichever comes first, and is started (or reconnected) again.
"""

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Sequence
from typing import Any

import structlog
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.caching import CacheMode
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult
from mcp_types import Tool as McpTool

from agentkit.adapters.mcp.tools import mcp_tool
from agentkit.application.errors import ToolRegistrationError
from agentkit.application.ports.tool_source import ToolSource
from agentkit.application.tools.errors import ToolError
from agentkit.application.tools.tool import Tool

logger = structlog.get_logger(__name__)

# JSON-RPC codes the SDK uses for a connection that is gone (not a refusal by the server)
_CONNECTION_CODES = frozenset({-32000, -32001})


class McpState(enum.StrEnum):
    """Where a connection is."""

    CONNECTING = "connecting"
    UP = "up"
    DOWN = "down"
    CLOSED = "closed"


class McpTarget:
    """How to reach a server: a command over stdio, or a Streamable HTTP URL (environment values resolved).

    Args:
        command: The program to start, with `args`, `env` and `cwd`.
        url: The endpoint, with `headers`.
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("an MCP server has a command or a url, not both")
        self.command, self.args, self.env, self.cwd = command, list(args), env or {}, cwd
        self.url, self.headers = url, headers or {}

    def describe(self) -> str:
        """The target in words (no header or environment values: they may be secrets)."""
        return self.url or " ".join([self.command or "", *self.args])

    @contextlib.asynccontextmanager
    async def open(self, *, read_timeout_s: float) -> AsyncIterator[Client]:
        """A connected client (the server started first, for stdio)."""
        async with contextlib.AsyncExitStack() as stack:
            if self.url is not None:
                http = await stack.enter_async_context(create_mcp_http_client(headers=self.headers))
                server: Any = streamable_http_client(self.url, http_client=http)
            else:
                server = StdioServerParameters(
                    command=self.command or "", args=self.args, env=self.env or None, cwd=self.cwd
                )
            client = await stack.enter_async_context(Client(server, read_timeout_seconds=read_timeout_s))
            yield client


class McpServerConnection(ToolSource):
    """One MCP server's connection and its tools (a ToolSource).

    Args:
        name: The server's name in the agents file.
        target: How to reach it.
        prefix: Put before each of its tools' names.
        only: Only these of its tools (their names on the server); None: all.
        timeout_s: A tool call's limit (None: TOOL_TIMEOUT_S, applied by the registry).
        connect_timeout_s: How long connecting and listing its tools may take.
        ping_interval_s: How often an idle connection is checked.
        restart_delay_s: The first pause before reconnecting; it doubles up to `restart_max_delay_s`.
    """

    def __init__(
        self,
        name: str,
        target: McpTarget,
        *,
        prefix: str,
        only: Sequence[str] | None = None,
        timeout_s: float | None = None,
        connect_timeout_s: float = 10.0,
        ping_interval_s: float = 5.0,
        restart_delay_s: float = 0.2,
        restart_max_delay_s: float = 5.0,
    ) -> None:
        self._name = name
        self._target = target
        self._prefix = prefix
        self._only = None if only is None else frozenset(only)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._ping_interval_s = ping_interval_s
        self._restart_delay_s = restart_delay_s
        self._restart_max_delay_s = restart_max_delay_s
        self._client: Client | None = None
        self._lost = asyncio.Event()
        self._up = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._tools: tuple[Tool[..., Any], ...] = ()
        self._listed: list[McpTool] | None = None  # what the server listed last (its tools are built from it)
        self._generation = 0
        self.state = McpState.CONNECTING
        self.last_error: str | None = None
        self.connections = 0

    @property
    def name(self) -> str:
        """The server's name."""
        return self._name

    @property
    def generation(self) -> int:
        """Changes whenever the tool listing does."""
        return self._generation

    def tools(self) -> Sequence[Tool[..., Any]]:
        """Its tools as last listed (kept while it is down: their calls then fail with a clear error)."""
        return self._tools

    def start(self) -> None:
        """Connect in the background (on the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp-{self._name}")

    async def wait_up(self, timeout_s: float) -> bool:
        """Wait until the server is connected (True) or `timeout_s` passed (False)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._up.wait()
        return self._up.is_set()

    async def aclose(self) -> None:
        """Stop the connection (and the server, for stdio)."""
        self.state = McpState.CLOSED
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def call(self, remote: str, arguments: dict[str, Any], timeout_s: float | None) -> CallToolResult:
        """Call one of the server's tools.

        Raises:
            ToolError: the server is not connected, or the connection broke during the call (the
                server is then reconnected), or the server refused the call.
        """
        client = self._client
        if client is None:
            reason = f" ({self.last_error})" if self.last_error else ""
            raise ToolError(
                f"the MCP server {self._name!r} is unavailable{reason}; it is being restarted, try again later"
            )
        try:
            return await client.call_tool(remote, arguments, read_timeout_seconds=timeout_s)
        except MCPError as exc:
            if exc.code in _CONNECTION_CODES:
                self._connection_lost(str(exc))
                raise ToolError(
                    f"the MCP server {self._name!r} stopped during the call ({exc}); it is being restarted"
                ) from None
            raise ToolError(f"the MCP server {self._name!r} refused the call: {exc}") from None
        except Exception as exc:
            # anything else is the transport's (an HTTP error, a broken stream): reconnecting is the cure
            self._connection_lost(_describe(exc))
            raise ToolError(
                f"the MCP server {self._name!r} could not be reached during the call ({_describe(exc)})"
            ) from None

    def _connection_lost(self, reason: str) -> None:
        logger.info("mcp_connection_lost", server=self._name, error=reason)
        if self._client is not None:
            self.last_error = reason
            self._client = None
            self._up.clear()
            self._lost.set()

    async def _supervise(self) -> None:
        delay = self._restart_delay_s
        while True:
            self._lost.clear()
            try:
                async with self._target.open(read_timeout_s=self._connect_timeout_s) as client:
                    async with asyncio.timeout(self._connect_timeout_s):
                        listed = await _list_tools(client)
                    self._listing(listed)
                    self._client = client
                    self.state = McpState.UP
                    self.last_error = None
                    self.connections += 1
                    self._up.set()
                    delay = self._restart_delay_s
                    logger.info("mcp_server_up", server=self._name, tools=len(self._tools), at=self._target.describe())
                    await self._watch(client)
            except Exception as exc:  # anyio groups the transport's failures (ExceptionGroup); none may stop us
                self.last_error = _describe(exc)
            finally:
                self._client = None
                self._up.clear()
            # said once when it goes down (and on the first failed try), not on every retry after
            log = logger.warning if self.state is not McpState.DOWN else logger.debug
            if self.state is not McpState.CLOSED:
                self.state = McpState.DOWN
            log("mcp_server_down", server=self._name, error=self.last_error, retry_in_s=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._restart_max_delay_s)

    async def _watch(self, client: Client) -> None:
        """Return when the connection is lost: a call saw it break, or a ping went unanswered."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._ping_interval_s):
                    await self._lost.wait()
            if self._lost.is_set():
                return
            try:
                # the check is a fresh listing (ping is gone from the 2026 protocol), which also
                # picks up tools the server added or changed
                async with asyncio.timeout(self._connect_timeout_s):
                    self._listing(await _list_tools(client, cache_mode="refresh"))
            except Exception as exc:  # whatever broke, the answer is to reconnect
                self.last_error = f"no answer to a check: {_describe(exc)}"
                return

    def _listing(self, listed: Sequence[McpTool]) -> None:
        # a check lists every few seconds: the same listing as last time changes nothing, and is
        # not built into tools again (each build makes a schema and an argument Struct a tool)
        if self._listed is not None and list(listed) == self._listed:
            return
        self._listed = list(listed)
        tools: list[Tool[..., Any]] = []
        for item in listed:
            if self._only is not None and item.name not in self._only:
                continue
            try:
                tools.append(
                    mcp_tool(
                        item,
                        server=self._name,
                        name=self._prefix + item.name,
                        call=self.call,
                        timeout_s=self._timeout_s,
                    )
                )
            except (ToolRegistrationError, TypeError, ValueError) as exc:
                logger.warning("mcp_tool_skipped", server=self._name, tool=item.name, error=str(exc))
        if [t.schema for t in tools] != [t.schema for t in self._tools]:  # a schema holds the tool's name
            self._generation += 1
        self._tools = tuple(tools)


async def _list_tools(client: Client, cache_mode: CacheMode = "use") -> list[McpTool]:
    listed: list[McpTool] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose cursor never ends cannot hold the connection forever
        page = await client.list_tools(cursor=cursor, cache_mode=cache_mode)
        listed.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return listed


def _describe(exc: BaseException) -> str:
    """The innermost cause of a failure, in one line (anyio wraps them in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
