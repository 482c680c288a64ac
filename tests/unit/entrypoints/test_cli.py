"""The `agentkit` command, run in-process as a user would run it."""

import io
import json
import re
import sys
from pathlib import Path

import pytest

from agentkit.entrypoints.wiring.main import main


@pytest.fixture(autouse=True)
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean environment with a user tool module named; state in memory (no servers)."""
    for name in ("DATABASE_URL", "REDIS_URL", "POSTGRES_HOST", "LLM_PROVIDER", "LLM_SCRIPT", "MAX_STEPS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STATE_BACKEND", "memory")
    monkeypatch.setenv("AGENTKIT_TOOL_MODULES", "tests.sample_tools")
    monkeypatch.setenv("LOG_LEVEL", "WARNING")


def script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns))
    return str(path)


ADD_SCRIPT: list[dict[str, object]] = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}], "input_tokens": 50, "output_tokens": 7},
    {"text": "2 + 3 = 5", "input_tokens": 70, "output_tokens": 5},
]


def test_run_shows_each_step_and_the_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "what is 2+3?", "--script", script(tmp_path, ADD_SCRIPT)])

    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("[1] llm")
    assert '-> add({"a":2,"b":3})' in lines[0]
    assert lines[1].startswith("[2] tool")
    assert 'add({"a":2,"b":3})' in lines[1]
    assert lines[2].strip() == "= 5.0"
    assert lines[3].startswith("[3] llm")
    assert "-> answer: 2 + 3 = 5" in lines[3]
    assert "status: succeeded   tokens: in=120 out=12" in out
    assert out.rstrip().endswith("2 + 3 = 5")


def test_run_json_prints_the_run_and_its_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "what is 2+3?", "--json", "--script", script(tmp_path, ADD_SCRIPT)])

    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == 0
    assert document["run"]["status"] == "succeeded"
    assert document["run"]["answer"] == "2 + 3 = 5"
    assert [step["type"] for step in document["trace"]] == ["llm", "tool", "llm"]
    assert document["trace"][1]["result"]["output"] == "5.0"
    assert "[1] llm" in captured.err  # live output goes to stderr so stdout stays JSON


def test_a_run_that_does_not_succeed_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "x", "--script", script(tmp_path, ADD_SCRIPT[:1])])

    out = capsys.readouterr().out
    assert code == 1
    assert "status: failed" in out
    assert "reason: the LLM call failed: the LLM script ran out after 1 response" in out


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MAX_STEPS": "many"}, "agentkit: configuration error: MAX_STEPS: Expected `int`, got `str`\n"),
        (
            {"AGENTKIT_TOOL_MODULES": "no_such_module_x"},
            "AGENTKIT_TOOL_MODULES: cannot import 'no_such_module_x'",
        ),
        ({"LLM_PROVIDER": "scripted"}, "LLM_SCRIPT"),
    ],
)
def test_bad_configuration_is_one_clear_line_and_exit_2(
    env: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    code = main(["run", "anything"])

    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_empty_goal_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "  ", "--script", script(tmp_path, ADD_SCRIPT)])

    assert code == 2
    assert capsys.readouterr().err == "agentkit: the goal is empty\n"


def test_a_missing_or_broken_script_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"txt": "typo"}]')

    assert main(["run", "x", "--script", str(tmp_path / "absent.json")]) == 2
    assert "LLM_SCRIPT: cannot read" in capsys.readouterr().err
    assert main(["run", "x", "--script", str(broken)]) == 2
    assert "unknown field `txt`" in capsys.readouterr().err


def test_typed_output_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    turns: list[dict[str, object]] = [{"tool_calls": [{"name": "final_result", "arguments": {"sum": 5}}]}]
    schema = '{"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}'

    code = main(["run", "add", "--json", "--output-schema", schema, "--script", script(tmp_path, turns)])

    assert code == 0
    assert json.loads(capsys.readouterr().out)["run"]["output"] == {"sum": 5.0}


def test_tools_lists_each_tool_with_its_parameters_and_says_why_one_is_absent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tools"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "add: Add two numbers.\n  a (number, required): The first number.\n  b (number, required)" in out
    assert "  count (integer, default 5): How many results to return" in out  # web_search's
    assert "  note: SEARCH_API_KEY is not set: every call answers with a configuration error" in out
    assert "sql_readonly: not available: no PostgreSQL holding the demo database" in out
    assert (
        captured.err
        == "agentkit: state: in memory, gone when the command ends (set DATABASE_URL, or STATE_BACKEND=embedded)\n"
    )

    assert main(["tools", "--json"]) == 0
    schemas = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert schemas["add"]["parameters"]["properties"]["a"] == {"description": "The first number.", "type": "number"}


def test_migrate_without_a_database_says_what_to_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate"]) == 2
    assert capsys.readouterr().err == (
        "agentkit: state: in memory, gone when the command ends (set DATABASE_URL, or STATE_BACKEND=embedded)\n"
        "agentkit: configuration error: DATABASE_URL: migrate needs PostgreSQL (set DATABASE_URL or POSTGRES_HOST)\n"
    )


def test_a_typed_output_run_answered_in_plain_text_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = '{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}'
    turns: list[dict[str, object]] = [{"text": "The sum is 5."}] * 3

    code = main(["run", "what is 2+3?", "--output-schema", schema, "--script", script(tmp_path, turns)])

    out = capsys.readouterr().out
    assert code == 1
    assert "status: failed" in out
    assert "instead of giving the required structured output (reminded 2 times)" in out


def test_demo_runs_the_demo_model_with_the_calculator(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo"])

    out = capsys.readouterr().out
    assert code == 0
    assert 'calculator({"expression":"(17 + 25) * 3"})' in out
    assert 'calculator({"expression":"126 * 0.15"})' in out
    assert out.rstrip().endswith("(17 + 25) * 3 = 126, and 15% of 126 is 18.9.")


def test_with_no_provider_configured_a_run_is_played_by_the_demo_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "what is 2+3?"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("2+3 = 5.")


@pytest.mark.parametrize("name", ["absent.json", "."])
def test_an_output_schema_file_that_cannot_be_read_is_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / name
    code = main(["run", "x", "--output-schema", f"@{target}", "--script", script(tmp_path, ADD_SCRIPT)])

    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"agentkit: configuration error: --output-schema: cannot read {target}: ")
    assert len(err.strip().splitlines()) == 1


def test_a_tool_with_a_typed_hidden_context_runs_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTKIT_TOOL_MODULES", "tests.sample_tools,tests.context_tools")
    turns: list[dict[str, object]] = [
        {"tool_calls": [{"name": "save_paper", "arguments": {"title": "On Loops", "content": "abc"}}]},
        {"text": "Saved."},
    ]

    code = main(["run", "save my paper", "--json", "--script", script(tmp_path, turns)])

    document = json.loads(capsys.readouterr().out)
    assert code == 0
    output = document["trace"][1]["result"]["output"]
    assert output.startswith("saved 'On Loops' (3 chars) to postgresql://papers@127.0.0.1:5432/papers for run ")
    assert output.endswith("with key #6907c4e8")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_run_streams_and_its_answer_is_written_as_it_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = Tty()
    monkeypatch.setattr(sys, "stdout", terminal)

    code = main(["run", "what is 2+3?", "--script", script(tmp_path, ADD_SCRIPT)])

    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())
    lines = [line.strip("\r ") for line in shown.splitlines() if "(step" not in line and line.strip("\r ")]
    assert code == 0
    call = next(line for line in lines if line.startswith("[1] llm  -> add("))  # the arguments as they came
    assert call.replace(" ", "").endswith('({"a":2,"b":3})')
    answer = lines.index("[3] llm  2 + 3 = 5")  # the answer as it came, its figures under it
    assert lines[answer + 1].endswith("ms  tokens in=70 out=5")
    assert lines[-1].startswith("status: succeeded")  # the answer is not printed again
