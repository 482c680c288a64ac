"""The admin commands and `agentkit serve`, on real PostgreSQL and Redis."""

import asyncio
import json
import secrets
import time

import pytest

from agentkit.entrypoints.wiring.main import main
from tests.demo_fixtures import drop_demo
from tests.state_fixtures import StateServers, unique_name

pytestmark = pytest.mark.integration


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_migrate_reports_the_revision(server_env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate"]) == 0
    assert capsys.readouterr().out == "database schema at revision 0012\n"


def test_a_cli_run_is_stored_and_can_be_read_back(
    server_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "run", "what is 6 * 7?", "--json")
    assert isinstance(document, dict)
    run_id = document["run"]["id"]

    shown = run_json(capsys, "runs", "show", run_id)
    trace = run_json(capsys, "runs", "trace", run_id)

    assert isinstance(shown, dict)
    assert (shown["status"], shown["answer"]) == ("succeeded", "42")
    assert isinstance(trace, list)
    assert [(step["type"], step["step_no"]) for step in trace] == [("llm", 1), ("tool", 2), ("llm", 3)]
    assert trace[1]["result"]["output"] == "42"
    assert main(["runs", "show", "00000000-0000-0000-0000-000000000000"]) == 2
    assert "no run with id" in capsys.readouterr().err


def test_prune_deletes_finished_runs_older_than_the_age(
    server_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    document = run_json(capsys, "run", "6 * 7", "--json")
    assert isinstance(document, dict)
    time.sleep(1.1)

    assert main(["prune", "--older-than", "1s"]) == 0
    assert capsys.readouterr().out.startswith("deleted 1 runs (with their steps)")
    assert main(["runs", "show", document["run"]["id"]]) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["prune", "--older-than", "soon"])
    assert exit_info.value.code == 2
    assert "'soon' is not an age like 30d" in capsys.readouterr().err


def test_seed_demo_creates_the_demo_database_and_its_reader(
    server_env: dict[str, str],
    state_servers: StateServers,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    database, reader = unique_name("demo"), f"agentkit_reader_{secrets.token_hex(4)}"
    monkeypatch.setenv("DEMO_DATABASE", database)
    monkeypatch.setenv("POSTGRES_READONLY_USER", reader)
    try:
        assert main(["seed-demo"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"demo database {database!r} seeded (customers 8, products 10")
        assert f"read-only role {reader!r}" in out
        assert main(["tools"]) == 0
        listed = capsys.readouterr().out
        assert "sql_readonly: " in listed
        assert "  query (string, required): " in listed
        assert "not available" not in listed
    finally:
        asyncio.run(drop_demo(state_servers.server_url, database, reader))


def test_seed_demo_without_a_database_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DATABASE_URL", "POSTGRES_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STATE_BACKEND", "memory")

    assert main(["seed-demo"]) == 2
    assert "seeding the demo database needs PostgreSQL" in capsys.readouterr().err


def test_runs_list_pages_and_trace_prompts_show_what_each_llm_call_sent(
    server_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    made = [run_json(capsys, "run", f"what is {n} * 7?", "--json") for n in (6, 7)]
    ids = [document["run"]["id"] for document in made if isinstance(document, dict)]

    first = run_json(capsys, "runs", "list", "--limit", "1")
    assert isinstance(first, dict)
    second = run_json(capsys, "runs", "list", "--limit", "1", "--cursor", first["next_cursor"])
    failed = run_json(capsys, "runs", "list", "--status", "failed")
    traced = run_json(capsys, "runs", "trace", ids[0], "--prompts")

    assert isinstance(second, dict)
    assert [run["id"] for run in first["runs"] + second["runs"]] == ids[::-1]
    assert isinstance(failed, dict)
    assert ids[0] not in {run["id"] for run in failed["runs"]}
    assert isinstance(traced, dict)
    llm_steps = [step for step in traced["steps"] if step["type"] == "llm"]
    assert [step["prompt"]["message_count"] for step in llm_steps] == [2, 4]
    assert [m["seq"] for m in traced["messages"]] == [1, 2, 3, 4]
    assert traced["messages"][1]["message"] == {"role": "user", "content": "what is 6 * 7?"}
    assert set(traced["tool_sets"]) == {llm_steps[0]["prompt"]["tools_digest"]}
