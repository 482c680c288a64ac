"""`agentkit runs approve|reject|answer`: a paused run answered from the command line, through the API.

The command only stores the answer (through the server that owns the run); the server resumes the
run. No browser needed: these run wherever the server can.
"""

import httpx
import pytest

from agentkit.entrypoints.wiring.main import main
from tests.browser.conftest import KEY, wait_for_status
from tests.browser.live_api import LiveApi


def paused(api: httpx.Client, goal: str, **body: object) -> str:
    response = api.post("/v1/runs", json={"goal": goal, **body}, headers={"Prefer": "respond-async"})
    run_id: str = response.json()["id"]
    wait_for_status(api, run_id, "requires_action")
    return run_id


def cli(live_api: LiveApi, *argv: str) -> int:
    return main([*argv, "--url", live_api.base_url, "--api-key", KEY])


def test_approve_from_the_command_line(
    live_api: LiveApi, api: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = paused(api, "delete the notes", approval_required=["delete_file"])

    assert cli(live_api, "runs", "approve", run_id, "call-delete_file") == 0

    out, err = capsys.readouterr()
    assert 'delete_file({"path": "notes.txt"})' in err  # what was approved is shown
    assert f"run {run_id}: running\n" in out  # stored; the server goes on with it
    run = wait_for_status(api, run_id, "succeeded")
    assert run["answer"] == "Done: deleted notes.txt"


def test_reject_with_a_reason_from_the_command_line(
    live_api: LiveApi, api: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = paused(api, "delete all the notes", approval_required=["delete_file"])

    assert cli(live_api, "runs", "reject", run_id, "call-delete_file", "--reason", "keep them") == 0

    run = wait_for_status(api, run_id, "succeeded")
    assert "keep them" in run["answer"]


def test_a_client_tools_output_from_the_command_line(live_api: LiveApi, api: httpx.Client) -> None:
    client_tool = {"description": "Ask the person at the browser.", "parameters": {"type": "object"}}
    run_id = paused(api, "ask the user", client_tools={"ask_user": client_tool})

    assert cli(live_api, "runs", "answer", run_id, "call-ask_user", '{"deleted": 3}') == 0

    run = wait_for_status(api, run_id, "succeeded")
    assert run["answer"] == 'Done: {"deleted":3}'


def test_wrong_answers_are_refused_with_one_line(
    live_api: LiveApi, api: httpx.Client, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = paused(api, "delete some notes", approval_required=["delete_file"])

    assert cli(live_api, "runs", "approve", run_id, "call-nope") == 2
    assert "does not wait on call 'call-nope'; it waits on call-delete_file" in capsys.readouterr().err
    assert cli(live_api, "runs", "answer", run_id, "call-delete_file", "text") == 2
    assert "use agentkit runs approve|reject" in capsys.readouterr().err
    assert cli(live_api, "runs", "approve", run_id, "call-delete_file", "--digest", "0" * 64) == 2
    assert "not answered" in capsys.readouterr().err
    assert cli(live_api, "runs", "approve", "5f0c6f39-0000-4000-8000-000000000000", "call-x") == 2
    assert "no run" in capsys.readouterr().err
    assert api.get(f"/v1/runs/{run_id}").json()["status"] == "requires_action"
