"""An MCP server's tool as a registry tool: its schema shown, its calls checked, timed, truncated and reported."""

import asyncio
from typing import Any

from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as McpTool

from agentkit.adapters.mcp.tools import mcp_tool
from agentkit.application.tools import ToolRegistry
from agentkit.application.tools.context import ToolContext
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall

LISTED = McpTool(
    name="word_count",
    description="Count words.",
    input_schema={
        "type": "object",
        "title": "word_countArguments",
        "properties": {"text": {"type": "string"}, "min-length": {"type": "integer"}},
        "required": ["text"],
    },
)
CONTEXT = ToolContext(run_id=RunId("r1"), owner=OwnerId("o"), session_id=None)


class Server:
    """Answers calls as a server would, and remembers them."""

    def __init__(self, result: CallToolResult, delay_s: float = 0.0) -> None:
        self.result = result
        self.delay_s = delay_s
        self.calls: list[tuple[str, dict[str, Any], float | None]] = []

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float | None) -> CallToolResult:
        self.calls.append((name, arguments, timeout_s))
        await asyncio.sleep(self.delay_s)
        return self.result


def registry_for(server: Server, *, timeout_s: float | None = None, output_max_chars: int = 100) -> ToolRegistry:
    tool = mcp_tool(LISTED, server="notes", name="notes_word_count", call=server.call, timeout_s=timeout_s)
    return ToolRegistry([tool], output_max_chars=output_max_chars)


def text(value: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=error)


async def run(registry: ToolRegistry, **arguments: Any) -> Any:
    return await registry.execute(ToolCall(id=ToolCallId("c"), name="notes_word_count", arguments=arguments), CONTEXT)


async def test_the_model_sees_the_servers_schema_and_calls_pass_on_as_given() -> None:
    server = Server(text("3"))
    registry = registry_for(server, timeout_s=7)

    result = await run(registry, text="a b c", **{"min-length": 1})

    (schema,) = registry.schemas()
    assert schema.parameters["required"] == ["text"]
    assert "title" not in schema.parameters
    assert (result.ok, result.output) == (True, "3")
    assert server.calls == [("word_count", {"text": "a b c", "min-length": 1}, 7)]


async def test_a_missing_argument_a_server_error_a_slow_call_and_long_output_are_tool_errors() -> None:
    missing = await run(registry_for(Server(text("never"))))
    refused = await run(registry_for(Server(text("text must not be empty", error=True))), text="")
    slow = await run(registry_for(Server(text("late"), delay_s=5), timeout_s=0.05), text="x")
    long = await run(registry_for(Server(text("word " * 100)), output_max_chars=20), text="x")

    assert missing.ok is False
    assert "Object missing required field `text`" in (missing.error or "")
    assert refused.error == "the MCP tool 'word_count' of server 'notes' failed: text must not be empty"
    assert slow.error == "tool 'notes_word_count' timed out after 0.05 s"
    assert (long.ok, long.truncated, len(long.output)) == (True, True, 20)
