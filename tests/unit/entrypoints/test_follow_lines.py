"""`agentkit run --follow`: what it prints while a run waits on its client."""

from agentkit.entrypoints.cli.follow import waiting_lines


def test_a_paused_run_shows_each_unanswered_call_and_where_to_answer_it() -> None:
    run = {
        "id": "r1",
        "status": "requires_action",
        "required_action": {
            "calls": [
                {"call_id": "c1", "name": "transfer", "arguments": {"amount": 5}, "digest": "d1", "kind": "approval"},
                {"call_id": "c2", "name": "pick", "arguments": {}, "digest": "d2", "kind": "client_tool"},
                {"call_id": "c3", "name": "done", "arguments": {}, "digest": "d3", "kind": "approval", "answer": {}},
            ]
        },
    }

    lines = waiting_lines(run)

    assert lines == [
        '  waits: transfer({"amount": 5}) call c1 digest d1 -> POST /v1/runs/r1/approvals',
        "  waits: pick({}) call c2 digest d2 -> POST /v1/runs/r1/tool_outputs",
    ]
    assert waiting_lines({"id": "r2", "status": "running", "required_action": None}) == []
