"""The agents file at start-up, and the agents on the command line (`run --agent`, `agents`, `tools --agent`)."""

import asyncio
import json
from pathlib import Path

import pytest

from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.tools.registry import ToolRegistry
from agentkit.entrypoints.wiring import load_settings, make_container
from agentkit.entrypoints.wiring.main import main
from agentkit.entrypoints.wiring.providers.agents import checked_agents

GOOD = """
[agents.support]
description = "Weather questions."
instructions = "You are the support desk."
tools = ["lookup"]
terminal_tools = ["lookup"]
limits = { max_steps = 3 }

[agents.math]
instructions = "Add things."
tools = ["add"]
"""


@pytest.fixture(autouse=True)
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean environment with the test tools; no servers."""
    for name in ("DATABASE_URL", "REDIS_URL", "POSTGRES_HOST", "LLM_PROVIDER", "LLM_SCRIPT", "MAX_STEPS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTKIT_TOOL_MODULES", "tests.sample_tools")
    monkeypatch.setenv("LOG_LEVEL", "WARNING")
    monkeypatch.setenv("STATE_BACKEND", "memory")


def write(tmp_path: Path, text: str, name: str = "agents.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_bad_agents_file_stops_start_up_with_one_line_per_mistake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
[agents.support]
tools = ["lookup", "serch"]
provider = "acme"
limits = { max_steps = 0 }

[agents.math]
tools = ["add"]
terminal_tools = ["lookup"]
mcp_servers = ["nowhere"]
limits = { max_steps = 500 }
""",
    )
    monkeypatch.setenv("AGENTS_FILE", path)

    code = main(["agents"])

    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert lines == [
        f"agentkit: configuration error: AGENTS_FILE {path}: agent 'support': limits.max_steps: Expected `int` >= 1"
    ]


def test_every_mistake_of_a_well_formed_file_gets_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        """
[agents.support]
tools = ["lookup", "serch"]
provider = "acme"

[agents.math]
tools = ["add"]
terminal_tools = ["lookup"]
mcp_servers = ["nowhere"]
limits = { max_steps = 500 }
output_schema = { type = "string" }
""",
    )
    monkeypatch.setenv("AGENTS_FILE", path)

    assert main(["tools", "--agent", "math"]) == 2

    # the first line says which state the command uses; the mistakes follow
    told = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("agentkit: state:")]
    err = "\n".join(told).removeprefix("agentkit: configuration error: ").splitlines()
    where = f"AGENTS_FILE {path}"
    assert err[0].startswith(f"{where}: agent 'support': tools: unknown tool 'serch' (the tools are: ")
    assert err[1].startswith(f"{where}: agent 'support': provider: unknown provider 'acme' (installed: ")
    assert err[2].startswith(f"{where}: agent 'math': mcp_servers: unknown MCP server 'nowhere'")
    assert err[3] == f"{where}: agent 'math': terminal_tools: 'lookup' is not one of the agent's tools"
    assert err[4].startswith(f"{where}: agent 'math': output_schema: ")
    assert err[5] == f"{where}: agent 'math': limits.max_steps: 500 is above the service's MAX_STEPS (10)"
    assert len(err) == 6


def test_the_service_does_not_start_on_a_bad_agents_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[agents.support]\ntools = ["nope"]\n\n[mcp_servers.x]\nurl = "ftp://host"\n')
    settings = load_settings({"AGENTS_FILE": path, "STATE_BACKEND": "memory"})

    async def start() -> None:
        container = make_container(settings)
        try:
            await container.get(RunScheduler)  # what `agentkit serve` builds before it listens
        finally:
            await container.close()

    with pytest.raises(ConfigurationError) as failure:
        asyncio.run(start())

    assert str(failure.value).splitlines() == [
        f"AGENTS_FILE {path}: mcp server 'x': url: 'ftp://host' is not an http or https URL",
        f"AGENTS_FILE {path}: agent 'support': tools: unknown tool 'nope' "
        "(the tools are: calculator, http_fetch, read_file, web_search)",
    ]


def test_unreadable_and_malformed_files_name_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = str(tmp_path / "missing.toml")
    broken = write(tmp_path, "[agents.support\n", "broken.toml")
    unknown = write(tmp_path, "[agents.support]\ntolls = []\n", "unknown.toml")

    messages = []
    for path in (missing, broken, unknown):
        with pytest.raises(ConfigurationError) as failure:
            _check(path)
        messages.append(str(failure.value))

    assert messages[0].startswith(f"AGENTS_FILE {missing}: cannot read it")
    assert messages[1].startswith(f"AGENTS_FILE {broken}: not valid TOML")
    assert messages[2] == f"AGENTS_FILE {unknown}: agent 'support': Object contains unknown field `tolls`"


def _check(path: str) -> None:
    checked_agents(load_settings({"AGENTS_FILE": path}), ToolRegistry())


def test_run_agent_and_listings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTS_FILE", write(tmp_path, GOOD))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "lookup", "arguments": {"city": "Paris"}}]}]))

    assert main(["run", "weather?", "--agent", "support", "--script", str(script), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert main(["agents", "--json"]) == 0
    agents = json.loads(capsys.readouterr().out)
    assert main(["tools", "--agent", "support", "--json"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert main(["run", "hi", "--agent", "nobody", "--script", str(script)]) == 2
    refused = capsys.readouterr().err

    run = document["run"]
    assert (run["agent"], run["status"], run["answer"], run["max_steps"]) == ("support", "succeeded", "sunny, 21 C", 3)
    assert run["agent_version"] == next(a["version"] for a in agents if a["name"] == "support")
    assert [a["name"] for a in agents] == ["default", "support", "math"]
    assert [t["name"] for t in tools] == ["lookup"]
    assert "no agent named 'nobody'; the agents are: default, support, math" in refused


def test_serve_does_not_start_on_a_bad_agents_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, '[agents.support]\ntools = ["lookup"]\nlimits = { run_timeout_s = 9999 }\n')
    monkeypatch.setenv("AGENTS_FILE", path)
    monkeypatch.setenv("API_KEYS", "a-key-of-twenty-chars-at-least")

    assert main(["serve", "--port", "1"]) == 2

    # the last line (the log's warnings, a demo model here, come before it)
    assert capsys.readouterr().err.splitlines()[-1:] == [
        f"agentkit: configuration error: AGENTS_FILE {path}: agent 'support': limits.run_timeout_s: 9999 is above "
        "the service's RUN_TIMEOUT_S (120)"
    ]


def test_an_agent_with_a_provider_of_its_own_runs_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the script"}]))
    monkeypatch.setenv("AGENTS_FILE", write(tmp_path, '[agents.scripted]\nprovider = "scripted"\n'))
    monkeypatch.setenv("LLM_PROVIDER", "demo")
    monkeypatch.setenv("LLM_SCRIPT", str(script))  # the scripted provider's own setting, still from the environment

    assert main(["agents", "--json"]) == 0
    agents = {agent["name"]: agent for agent in json.loads(capsys.readouterr().out)}
    assert main(["run", "anything", "--agent", "scripted", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["run"]

    assert (agents["default"]["provider"], agents["scripted"]["provider"]) == ("demo", "scripted")
    assert (run["agent"], run["answer"]) == ("scripted", "from the script")


def test_agentkit_run_of_an_agent_that_calls_another_waits_for_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = '[agents.boss]\ntools = []\nagents = ["math"]\n\n[agents.math]\ndescription = "Adds."\ntools = ["add"]\n'
    monkeypatch.setenv("AGENTS_FILE", write(tmp_path, tree))
    script = tmp_path / "script.json"
    # a script replays per conversation: the child's first turn asks for ask_math too (not its tool:
    # an error it reads), then both answer
    turns = [{"tool_calls": [{"name": "ask_math", "arguments": {"task": "add 2 and 3"}}]}, {"text": "5"}]
    script.write_text(json.dumps(turns))

    assert main(["run", "what is 2 + 3?", "--agent", "boss", "--script", str(script), "--json"]) == 0

    document = json.loads(capsys.readouterr().out)
    run = document["run"]
    assert (run["agent"], run["status"], run["answer"]) == ("boss", "succeeded", "5")
    tool_step = next(step for step in document["trace"] if step["type"] == "tool")
    assert (tool_step["tool_name"], tool_step["result"]["output"]) == ("ask_math", "5")  # the child's answer
