"""`agentkit tools` and `agentkit run --agent` with an agent whose MCP server the command starts."""

import json
from pathlib import Path

import pytest

from agentkit.entrypoints.wiring.main import main
from tests.mcp_fixtures import stdio_notes_server

AGENT = """
[agents.loud]
instructions = "Shout."
tools = []
mcp_servers = ["notes"]
terminal_tools = ["notes_shout"]
"""


@pytest.fixture(autouse=True)
def local_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No servers; the test tools; an agents file with the notes MCP server over stdio."""
    for name in ("DATABASE_URL", "REDIS_URL", "POSTGRES_HOST", "LLM_PROVIDER", "LLM_SCRIPT"):
        monkeypatch.delenv(name, raising=False)
    agents = tmp_path / "agents.toml"
    agents.write_text(stdio_notes_server(tmp_path / "pid") + AGENT, encoding="utf-8")
    monkeypatch.setenv("AGENTS_FILE", str(agents))
    monkeypatch.setenv("STATE_BACKEND", "memory")
    monkeypatch.setenv("LOG_LEVEL", "WARNING")


def test_tools_lists_the_mcp_servers_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools"]) == 0
    listing = capsys.readouterr().out
    assert main(["tools", "--agent", "loud", "--json"]) == 0
    loud = json.loads(capsys.readouterr().out)

    assert "from the MCP server 'notes':\nnotes_shout: Say the text in capitals." in listing
    assert [tool["name"] for tool in loud] == ["notes_shout", "notes_word_count", "notes_hold", "notes_server_pid"]


def test_a_run_of_the_agent_calls_the_mcp_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "notes_shout", "arguments": {"text": "hi"}}]}]))

    assert main(["run", "say hi", "--agent", "loud", "--script", str(script), "--json"]) == 0

    run = json.loads(capsys.readouterr().out)["run"]
    assert (run["status"], run["answer"], run["agent"]) == ("succeeded", "HI", "loud")
