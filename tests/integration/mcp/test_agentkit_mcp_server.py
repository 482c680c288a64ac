"""`agentkit mcp`: the agents as MCP tools, called by the SDK's own client over stdio."""

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

AGENTS = """
[agents.support]
description = "Answers questions about the weather."
instructions = "You are the support desk."
tools = ["lookup"]
"""


def server_params(tmp_path: Path, script: list[Any]) -> StdioServerParameters:
    agents = tmp_path / "agents.toml"
    agents.write_text(AGENTS, encoding="utf-8")
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "STATE_BACKEND": "memory",
        "LLM_PROVIDER": "scripted",
        "LLM_SCRIPT": str(script_file),
        "AGENTS_FILE": str(agents),
        "AGENTKIT_TOOL_MODULES": "tests.sample_tools",
        "PYTHONPATH": str(Path(__file__).parents[3]),
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "agentkit", "mcp"], env=env)


async def test_each_agent_is_an_mcp_tool_that_answers_with_its_run(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "lookup", "arguments": {"city": "Paris"}}]},
        {"text": "Sunny in Paris."},
    ]
    async with Client(server_params(tmp_path, script), read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        result = await client.call_tool("support", {"goal": "weather in Paris?"})

    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"default", "support"}
    assert "Answers questions about the weather." in (tools["support"].description or "")
    assert tools["support"].input_schema["required"] == ["goal"]
    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["answer"] == "Sunny in Paris."
    assert len(result.structured_content["run_id"]) == 36


async def test_a_run_that_fails_is_a_tool_error_naming_the_run(tmp_path: Path) -> None:
    async with Client(server_params(tmp_path, []), read_timeout_seconds=60) as client:
        result = await client.call_tool("default", {"goal": "anything"})

    assert result.is_error is True
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "ended failed" in text
    assert "the LLM script ran out" in text
