"""The service's tools as the settings place them: TOOL_ISOLATION, the process pool, the agents' parallel_tool_calls."""

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentkit.application.agents.catalog import AgentCatalog
from agentkit.application.errors import ToolRegistrationError
from agentkit.application.tools.context import ToolContext
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import Message, ToolCall
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.wiring import load_settings, make_container
from tests.fixtures.llm.replay import FIXTURES

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"))


@pytest.fixture(autouse=True)
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """State in memory, no agents file, no provider settings from the machine."""
    for name in ("DATABASE_URL", "REDIS_URL", "POSTGRES_HOST", "AGENTS_FILE", "LLM_BASE_URL", "TOOL_ISOLATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STATE_BACKEND", "memory")


async def test_with_tool_isolation_process_the_users_sync_tools_run_in_workers_and_the_built_ins_stay() -> None:
    settings = load_settings(
        {**os.environ, "TOOL_ISOLATION": "process", "AGENTKIT_TOOL_MODULES": "tests.process_tools,tests.sample_tools"}
    )
    container = make_container(settings)
    try:
        tools = await container.get(ToolRegistry)
        result = await tools.execute(ToolCall(id=ToolCallId("c1"), name="plain", arguments={}), CONTEXT)
    finally:
        await container.close()

    assert result.ok
    assert result.value != os.getpid()
    assert tools.runs_in_process("plain")
    assert tools.runs_in_process("add")
    assert not tools.runs_in_process("calculator")  # bounded by construction, a closure over its limits
    assert not tools.runs_in_process("lookup")  # async: cancelled where it waits


async def test_with_tool_isolation_process_a_tool_a_worker_cannot_import_stops_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "made_tools.py").write_text(
        "from agentkit import tool\n\n"
        "def make():\n"
        "    @tool\n"
        "    def inner() -> str:\n"
        '        """Made inside a function: no process can import it by name."""\n'
        '        return "x"\n'
        "    return inner\n\n"
        "inner = make()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "made_tools", raising=False)
    settings = load_settings({"TOOL_ISOLATION": "process", "AGENTKIT_TOOL_MODULES": "made_tools"})
    container = make_container(settings)
    try:
        with pytest.raises(ToolRegistrationError, match="define it at the top level of a module"):
            await container.get(ToolRegistry)
    finally:
        await container.close()


class FakeOpenAI:
    """An OpenAI-compatible server on loopback that answers every request alike and keeps the bodies."""

    def __init__(self) -> None:
        answer = json.loads((FIXTURES / "openai" / "text.json").read_text())["body"]
        self.bodies: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                payload = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    threading.Thread(target=server.httpd.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


async def test_an_agent_profile_sets_parallel_tool_calls_and_the_others_leave_the_providers_default(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    agents = tmp_path / "agents.toml"
    agents.write_text('[agents.one_at_a_time]\nparallel_tool_calls = false\n\n[agents.plain]\ninstructions = "Hi."\n')
    settings = load_settings(
        {
            "STATE_BACKEND": "memory",
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": "gpt-4.1-mini",
            "OPENAI_API_KEY": "sk-test",
            "LLM_BASE_URL": fake_openai.url,
            "AGENTS_FILE": str(agents),
        }
    )
    weather = ToolSchema(name="weather", description="The weather.", parameters={"type": "object", "properties": {}})
    container = make_container(settings)
    try:
        catalog = await container.get(AgentCatalog)
        for name in ("one_at_a_time", "plain", "default"):
            await catalog.require(name).llm.chat([Message(role="user", content="weather?")], [weather])
    finally:
        await container.close()

    assert [body.get("parallel_tool_calls") for body in fake_openai.bodies] == [False, None, None]
    assert ["parallel_tool_calls" in body for body in fake_openai.bodies] == [True, False, False]
