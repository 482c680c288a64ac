"""Agents that call agents over HTTP: child runs as tools, linked, visible, limited and cancelled as one tree."""

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentkit.application.runs.queries import GetRunTree
from agentkit.application.tools import tool
from agentkit.domain.ids import RunId
from agentkit.entrypoints.cli.tree_view import tree_lines
from tests.agent_tree_fixtures import GoalScriptedLLM, agents_file, answer, calls
from tests.http_fixtures import ApiClient, ApiFactory, headers
from tests.sse_fixtures import events_of, read_all, served

GOAL = "what is 2 + 3, and say it nicely"
MATH_TASK = "add 2 and 3"
WRITER_TASK = "one line about five"


@pytest.fixture(params=["memory", "real"])
def both_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """On in-memory state, and on the test database and Redis (migration 0011's columns)."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


async def read(api: ApiClient, path: str, **params: Any) -> Any:
    response = await api.get(path, params=params, headers=headers())
    assert response.status_code == 200, response.text
    return response.json()


async def test_an_agent_calls_two_agents_as_tools_and_the_tree_is_linked_and_visible(
    both_factory: ApiFactory, tmp_path: Path
) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [
                calls(("ask_math", "c1", {"task": MATH_TASK}), ("ask_writer", "c2", {"task": WRITER_TASK})),
                answer("2 + 3 = 5. Five is fine."),
            ],
            MATH_TASK: [calls(("add", "m1", {"a": 2, "b": 3})), calls(("final_result", "m2", {"value": 5}))],
            WRITER_TASK: [answer("Five is fine.")],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post("/v1/runs", json={"goal": GOAL, "agent": "triage"}, headers=headers())

    assert created.status_code == 201, created.text
    run = created.json()
    assert (run["status"], run["answer"], run["agent"]) == ("succeeded", "2 + 3 = 5. Five is fine.", "triage")
    parent = await read(api, f"/v1/runs/{run['id']}")
    children = parent["children"]
    assert [(c["agent"], c["status"], c["call_id"], c["step_no"]) for c in children] == [
        ("math", "succeeded", "c1", 1),
        ("writer", "succeeded", "c2", 1),
    ]
    # usage rolls up: the parent's own two calls, and the tree's five
    assert parent["usage"] == {"input_tokens": 20, "output_tokens": 4}
    assert parent["tree_usage"] == {"input_tokens": 50, "output_tokens": 10}
    math = await read(api, children[0]["link"])
    assert (math["parent_run_id"], math["parent_call_id"], math["parent_step_no"]) == (run["id"], "c1", 1)
    assert (math["goal"], math["output"], math["depth"]) == (MATH_TASK, {"value": 5}, 1)
    listed = await read(api, "/v1/runs", parent_run_id=run["id"])
    assert sorted(r["id"] for r in listed["runs"]) == sorted(c["id"] for c in children)
    # the parent's trace: the calls' results are the children's typed output and answer
    steps = (await read(api, f"/v1/runs/{run['id']}/trace"))["steps"]
    results = {s["tool_name"]: s["result"] for s in steps if s["kind"] == "tool"}
    assert results["ask_math"]["ok"] is True
    assert results["ask_math"]["output"] == '{"value":5}'
    assert results["ask_writer"]["output"] == "Five is fine."
    # the model saw the agents as tools, with their descriptions; no turn was asked for twice
    tools = {schema.name: schema for schema in llm.requests[0][2]}
    assert set(tools) == {"ask_math", "ask_writer"}
    assert tools["ask_math"].description.startswith("Computes exactly.")
    assert llm.asked == {GOAL: 2, MATH_TASK: 2, WRITER_TASK: 1}
    # the parent's event stream carries its children's status changes
    async with served(api.app) as url, httpx.AsyncClient(base_url=url, headers=headers(), timeout=30) as client:
        events = await read_all(client, f"/v1/runs/{run['id']}/events")
    statuses = [e.data["status"] for e in events if e.event == "status"]
    assert statuses[0] == "pending"
    assert "waiting" in statuses
    assert statuses[-1] == "succeeded"
    child_events = {(e.data["agent"], e.data["status"]) for e in events if e.event == "child"}
    assert {("math", "succeeded"), ("writer", "succeeded"), ("math", "running")} <= child_events
    assert all(e.data["parent_run_id"] == run["id"] for e in events if e.event == "child")
    # `agentkit runs trace ID --tree`: each child under the call that started it
    async with api.app.state.dishka_container() as request:
        node = await (await request.get(GetRunTree)).execute(RunId(run["id"]), None)
    lines = tree_lines(node)
    assert lines[0] == f"triage {run['id']} succeeded, 20+4 tokens (tree 50+10)"
    assert lines[1] == "    1 llm calls ask_math, ask_writer"
    math_at = next(n for n, line in enumerate(lines) if "tool ask_math" in line)
    assert lines[math_at + 1].startswith(f"    math {children[0]['id']} succeeded")
    assert any(line.endswith('tool final_result -> {"value":5}') for line in lines)


async def test_a_cycle_of_agents_is_stopped_with_its_path_named(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_writer", "c1", {"task": WRITER_TASK})), answer("the writer could not help")],
            WRITER_TASK: [calls(("ask_triage", "w1", {"task": "triage again"})), answer("triage would loop")],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post("/v1/runs", json={"goal": GOAL, "agent": "triage"}, headers=headers())

    assert created.status_code == 201, created.text
    assert created.json()["answer"] == "the writer could not help"
    [writer] = (await read(api, f"/v1/runs/{created.json()['id']}"))["children"]
    writer_run = await read(api, writer["link"])
    assert (writer_run["status"], writer_run["children"]) == ("succeeded", [])  # no run was started for the cycle
    steps = (await read(api, f"{writer['link']}/trace"))["steps"]
    refused = next(s for s in steps if s.get("tool_name") == "ask_triage")
    assert refused["result"]["ok"] is False
    assert "a cycle of agents (triage -> writer -> triage)" in refused["result"]["error"]
    assert "triage again" not in llm.asked


async def test_the_trees_token_budget_stops_a_child(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_math", "c1", {"task": MATH_TASK})), answer("never asked")],
            MATH_TASK: [calls(("add", "m1", {"a": 2, "b": 3}), tokens=90)],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post("/v1/runs", json={"goal": GOAL, "agent": "triage", "token_budget": 100}, headers=headers())

    assert created.status_code == 201, created.text
    parent = await read(api, f"/v1/runs/{created.json()['id']}")
    # the tree spent 12 + 92: the parent stops too, before it asks its model again
    assert (parent["status"], parent["failure_reason"]) == (
        "failed",
        "token budget exceeded: 104 tokens spent by this run and its child runs, the budget is 100",
    )
    assert llm.asked[GOAL] == 1
    [child] = parent["children"]
    math = await read(api, child["link"])
    # the child had what the parent left: 100 - the parent's first call (12)
    assert (math["status"], math["token_budget"]) == ("failed", 88)
    assert math["failure_reason"] == "token budget exceeded: 92 tokens spent, the budget is 88"
    assert parent["tree_usage"] == {"input_tokens": 100, "output_tokens": 4}


async def test_the_trees_steps_count_against_the_roots_max_steps(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_writer", "c1", {"task": WRITER_TASK})), answer("never asked")],
            # the writer's call of triage is refused (a cycle): a tool error, and a step of the tree
            WRITER_TASK: [calls(("ask_triage", "w1", {"task": "again"})), answer("Five is fine.")],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post("/v1/runs", json={"goal": GOAL, "agent": "triage", "max_steps": 3}, headers=headers())

    assert created.status_code == 201, created.text
    parent = await read(api, f"/v1/runs/{created.json()['id']}")
    [child] = parent["children"]
    writer = await read(api, child["link"])
    # the child had what the tree left: 3 - the parent's first call; it took both
    assert (writer["status"], writer["max_steps"]) == ("succeeded", 2)
    # the tree took 3 steps: the parent stops before it asks its model again
    assert parent["status"] == "max_steps_exceeded"
    assert "max_steps" in parent["failure_reason"]
    assert llm.asked[GOAL] == 1


async def test_a_child_gets_no_more_steps_than_the_tree_has_left(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_writer", "c1", {"task": WRITER_TASK})), answer("Five is fine.")],
            WRITER_TASK: [answer("Five is fine.")],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post("/v1/runs", json={"goal": GOAL, "agent": "triage", "max_steps": 3}, headers=headers())

    parent = await read(api, f"/v1/runs/{created.json()['id']}")
    assert (parent["status"], parent["answer"]) == ("succeeded", "Five is fine.")  # 1 + 1 + 1 steps: within 3
    [child] = parent["children"]
    assert (await read(api, child["link"]))["max_steps"] == 2


async def test_cancelling_a_parent_cancels_its_children(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_math", "c1", {"task": MATH_TASK})), answer("never")],
            MATH_TASK: [calls(("add", "m1", {"a": 2, "b": 3})), answer("never")],
        },
        gated=[MATH_TASK],
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    created = await api.post(
        "/v1/runs", json={"goal": GOAL, "agent": "triage"}, headers=headers(Prefer="respond-async")
    )
    run_id = created.json()["id"]
    await llm.entered[MATH_TASK].wait()  # the child is in its model call
    cancelled = await api.post(f"/v1/runs/{run_id}/cancel", headers=headers())
    llm.gates[MATH_TASK].set()

    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    [child] = (await read(api, f"/v1/runs/{run_id}"))["children"]
    math = await read(api, child["link"], wait=10)
    assert (math["status"], math["cancel_requested"]) == ("cancelled", True)
    parent = await read(api, f"/v1/runs/{run_id}")
    assert (parent["status"], parent["failure_reason"]) == ("cancelled", "cancelled while it waited on its child runs")
    assert llm.asked[MATH_TASK] == 1  # it stopped at its next step


APPROVING_AGENTS = """
[agents.triage]
description = "Asks math."
instructions = "You are triage."
tools = []
agents = ["math"]

[agents.math]
description = "Computes, with approval."
instructions = "You are math."
tools = ["charge"]
"""


@tool(requires_approval=True)
def charge(amount: int) -> str:
    """Charge the customer.

    Args:
        amount: Euros.
    """
    return f"charged {amount}"


async def test_a_child_whose_approval_expires_answers_its_parent(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_math", "c1", {"task": MATH_TASK})), answer("math did not answer")],
            MATH_TASK: [calls(("charge", "m1", {"amount": 5})), answer("never")],
        }
    )
    # the sweeper looks every half lease: a short lease makes it look often
    api = await both_factory(
        llm=llm,
        tools=[charge],
        agents_file=agents_file(tmp_path, APPROVING_AGENTS),
        APPROVAL_TTL_S=0.5,
        RUN_LEASE_S=1,
    )
    # the child's call of `charge` needs an approval; nobody gives it
    created = await api.post(
        "/v1/runs",
        json={"goal": GOAL, "agent": "triage"},
        headers=headers(Prefer="respond-async"),
    )
    run_id = created.json()["id"]

    parent = await read(api, f"/v1/runs/{run_id}")
    for _ in range(600):  # until the tree is over (30 s at most)
        if parent["status"] not in ("pending", "running", "waiting"):
            break
        await asyncio.sleep(0.05)
        parent = await read(api, f"/v1/runs/{run_id}")

    assert (parent["status"], parent["answer"]) == ("succeeded", "math did not answer")
    [child] = parent["children"]
    math = await read(api, child["link"])
    assert math["status"] == "expired"
    assert "APPROVAL_TTL_S" in math["failure_reason"]
    trace = await read(api, f"/v1/runs/{run_id}/trace")
    [call] = [s for s in trace["steps"] if s.get("tool_name") == "ask_math"]
    assert call["result"]["ok"] is False
    assert "expired" in call["result"]["error"]


HANDOFF_AGENTS = """
[agents.frontdesk]
description = "Greets and routes."
instructions = "You are the front desk."
tools = []
handoffs = ["billing"]

[agents.billing]
description = "Answers billing questions."
instructions = "You are billing."
tools = ["lookup"]
"""


async def test_a_handoff_goes_on_as_the_other_agent_and_the_trace_names_both(
    both_factory: ApiFactory, tmp_path: Path
) -> None:
    goal = "why was I charged twice?"
    llm = GoalScriptedLLM(
        {
            goal: [
                calls(("transfer_to_billing", "h1", {}), ("lookup", "x1", {"city": "Paris"})),
                calls(("lookup", "b1", {"city": "Paris"})),
                answer("Billing here: a refund is on its way."),
            ]
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path, HANDOFF_AGENTS))

    created = await api.post("/v1/runs", json={"goal": goal, "agent": "frontdesk"}, headers=headers())

    assert created.status_code == 201, created.text
    run = created.json()
    assert (run["status"], run["agent"]) == ("succeeded", "billing")
    assert run["answer"] == "Billing here: a refund is on its way."
    trace = await read(api, f"/v1/runs/{run['id']}/trace")
    assert trace["agent"] == "billing"
    assert [(s["kind"], s.get("tool_name"), s["agent"]) for s in trace["steps"]] == [
        ("llm", None, "frontdesk"),
        ("tool", "transfer_to_billing", "frontdesk"),
        ("tool", "lookup", "frontdesk"),
        ("llm", None, "billing"),
        ("tool", "lookup", "billing"),
        ("llm", None, "billing"),
    ]
    skipped = trace["steps"][2]["result"]
    assert (skipped["ok"], skipped["error"]) == (False, "not run: the conversation was handed to 'billing'")
    # the conversation was kept, under billing's instructions and tools
    (_, first, first_tools), (_, second, second_tools), _ = llm.requests
    assert "You are the front desk." in (first[0].content or "")
    assert "You are billing." in (second[0].content or "")
    assert [m.content for m in second if m.role == "user"] == [goal]
    assert [schema.name for schema in first_tools] == ["transfer_to_billing"]
    assert [schema.name for schema in second_tools] == ["lookup"]
    # the handoff's result is no error; the call it skipped is one (Anthropic sends it with is_error)
    assert [(m.tool_call_id, m.is_error) for m in second if m.role == "tool"] == [("h1", False), ("x1", True)]
    # the stored prompts show what each call sent: message 1 is the asking agent's instructions
    prompted = await read(api, f"/v1/runs/{run['id']}/trace", include="prompts")
    by_seq = {m["seq"]: m["message"] for m in prompted["messages"]}
    sent_system = []
    for step in prompted["steps"]:
        if step["kind"] == "llm":
            request = step["request"]
            sent = [by_seq[seq] for seq in range(1, request["message_count"] + 1)]
            sent[0] = by_seq[request.get("system_seq", 1)]
            sent_system.append((step["agent"], sent[0]["content"]))
            assert [m["content"] for m in sent if m["role"] == "user"] == [goal]
    assert [(agent, "front desk" in text, "billing" in text) for agent, text in sent_system] == [
        ("frontdesk", True, False),
        ("billing", False, True),
        ("billing", False, True),
    ]
    # the conversation's messages come first, so each call's are a prefix of the list
    assert [m["seq"] for m in prompted["messages"]][: len(by_seq) - 1] == list(range(1, len(by_seq)))


async def test_a_streamed_parents_stream_carries_its_childs_fragments(both_factory: ApiFactory, tmp_path: Path) -> None:
    llm = GoalScriptedLLM(
        {
            GOAL: [calls(("ask_writer", "c1", {"task": WRITER_TASK})), answer("The writer says: Five is fine.")],
            WRITER_TASK: [answer("Five is fine.")],
        }
    )
    api = await both_factory(llm=llm, agents_file=agents_file(tmp_path))

    async with served(api.app) as url, httpx.AsyncClient(base_url=url, headers=headers(), timeout=30) as client:
        accept = {"Accept": "text/event-stream"}
        async with client.stream("POST", "/v1/runs", json={"goal": GOAL, "agent": "triage"}, headers=accept) as sse:
            events = [event async for event in events_of(sse) if event.event is not None]

    assert events[-1].data["status"] == "succeeded"
    [child] = {e.data["id"] for e in events if e.event == "child"}
    fragments = [e.data for e in events if e.event == "child_delta"]
    assert {f["run_id"] for f in fragments} == {child}
    assert "".join(f["delta"]["text"] for f in fragments if f["delta"]["kind"] == "text") == "Five is fine."
