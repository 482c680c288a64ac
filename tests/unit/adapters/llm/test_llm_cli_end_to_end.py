"""`agentkit run` end to end against an OpenAI-compatible server on 127.0.0.1 (a tiny stdlib one).

Nothing here knows the adapter: the environment names the provider, the model and the URL, as a
user pointing AgentKit at a local vLLM, Ollama or llama.cpp server would.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentkit.entrypoints.wiring.main import main
from tests.fixtures.llm.recorded import recorded
from tests.fixtures.llm.replay import FIXTURES


def completion(message: dict[str, Any], finish_reason: str, prompt_tokens: int, completion_tokens: int) -> Any:
    """A Chat Completions answer shaped like the recorded ones, with this message."""
    body = json.loads((FIXTURES / "openai" / "text.json").read_text())["body"]
    body["model"] = "test-model"
    body["choices"][0]["message"] = {"role": "assistant", "content": None, **message}
    body["choices"][0]["finish_reason"] = finish_reason
    body["usage"] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return body


ADD_CALL = {"id": "call_e2e_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}


class CompatibleServer:
    """An OpenAI-compatible `/v1/chat/completions` answering from a queue; it keeps what it was sent."""

    def __init__(self, answers: list[tuple[int, Any]]) -> None:
        self.answers = answers
        self.received: list[tuple[str, dict[str, str], Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.received.append((self.path, headers, body))
                status, answer = server.answers.pop(0)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # keep the test output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "CompatibleServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def compatible_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A clean environment with the `add` tool; state in memory, no servers but ours.

    (The root conftest puts structlog's defaults back after each test.)
    """
    for name in (
        "DATABASE_URL",
        "REDIS_URL",
        "POSTGRES_HOST",
        "LLM_SCRIPT",
        "MAX_STEPS",
        "OPENAI_BASE_URL",
        "LLM_TOOL_CALL_CONTENT",
        "LLM_TEXT_TOOL_CALLS",
        "SEARCH_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTKIT_TOOL_MODULES", "tests.sample_tools")
    monkeypatch.setenv("STATE_BACKEND", "memory")
    monkeypatch.setenv("LOG_LEVEL", "WARNING")
    monkeypatch.setenv("LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LLM_MODEL", "test-model")
    monkeypatch.setenv("LLM_BACKOFF_BASE_S", "0.01")
    return monkeypatch


def test_agentkit_run_against_a_compatible_server(
    compatible_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = [
        (429, {"error": {"message": "busy", "type": "requests", "code": None}}),  # retried by the one policy
        (200, completion({"tool_calls": [ADD_CALL]}, "tool_calls", 50, 7)),
        (200, completion({"content": "2 + 3 = 5"}, "stop", 70, 5)),
    ]
    with CompatibleServer(answers) as server:
        compatible_env.setenv("LLM_BASE_URL", server.url)
        code = main(["run", "what is 2+3?"])

    out = capsys.readouterr().out
    assert code == 0, out
    assert "status: succeeded" in out
    assert out.rstrip().endswith("2 + 3 = 5")
    assert len(server.received) == 3
    path, headers, first = server.received[1]
    assert path == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer test"
    assert first["model"] == "test-model"
    assert "add" in {tool["function"]["name"] for tool in first["tools"]}
    assert first["tool_choice"] == "auto"
    _, _, second = server.received[2]
    assistant, result = second["messages"][-2:]
    assert assistant["content"] == ""
    assert assistant["tool_calls"] == [ADD_CALL | {"function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]
    assert (result["role"], result["tool_call_id"], result["content"]) == ("tool", "call_e2e_1", "5.0")


def test_agentkit_run_says_why_when_the_server_rejects_the_key(
    compatible_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    unauthorized = json.loads((FIXTURES / "openai" / "unauthorized.json").read_text())["body"]
    with CompatibleServer([(401, unauthorized)]) as server:
        compatible_env.setenv("LLM_BASE_URL", server.url)
        code = main(["run", "what is 2+3?"])

    out = capsys.readouterr().out
    assert code == 1
    assert "status: failed" in out
    assert "rejected the API key (HTTP 401); check OPENAI_API_KEY" in out
    assert len(server.received) == 1  # never retried


def test_agentkit_run_against_recorded_llama_cpp_python_answers(
    compatible_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # llama-cpp-python 0.3.36's answers to a calculator goal: five tool calls, then the 2,048-token
    # context is full (HTTP 400). Served on 127.0.0.1 as the real server answered them.
    exchanges = recorded("calculator_until_context_overflow")
    compatible_env.setenv("FILE_TOOL_BASE_DIR", str(tmp_path / "missing"))
    with CompatibleServer([(exchange.status, exchange.response) for exchange in exchanges]) as server:
        compatible_env.setenv("LLM_BASE_URL", server.url)
        code = main(["run", "What is 17*23? Use the calculator."])

    out = capsys.readouterr().out
    assert code == 1
    assert "status: failed" in out
    assert "rejected the request (HTTP 400): This model's maximum context length is 2048 tokens" in out
    assert len(server.received) == len(exchanges)
    for _, _, body in server.received:
        assert body["tool_choice"] == "auto"  # without it, llama-cpp-python leaves the tools out
        for message in body["messages"]:
            if message.get("tool_calls"):
                assert message["content"] == ""  # without it, its template answers HTTP 500
    _, _, second = server.received[1]
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": exchanges[0].answer["tool_calls"][0]["id"],
        "content": "391",
    }
