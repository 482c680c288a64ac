"""POST/GET /v1/runs, the trace, cancel: through HTTP, on the in-memory adapters and on real PostgreSQL and Redis.

This suite is the one that runs the whole API on both: the in-memory adapters are the fast default
of the HTTP tests, and the real servers must behave the same.
"""

import asyncio
from typing import Any

import pytest

from agentkit.application.tools import Tool, tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from tests.context_tools import PAPERS_DATABASE_URL
from tests.http_fixtures import KEY_B, ApiClient, ApiFactory, Gate, headers, session_name
from tests.sample_tools import add


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


def calls(name: str, call_id: str = "c1", **arguments: Any) -> LLMResponse:
    return LLMResponse(
        tool_calls=(ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments),),
        usage=Usage(input_tokens=100, output_tokens=10),
    )


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=120, output_tokens=8))


def gate_tool(gate: Gate) -> Tool[..., Any]:
    @tool
    async def wait_for_gate() -> str:
        """Wait until the test opens the gate."""
        gate.entered.set()
        await gate.opened.wait()
        return "through"

    return wait_for_gate


async def test_a_run_answers_201_and_its_trace_is_persisted(api_factory: ApiFactory) -> None:
    api = await api_factory([calls("add", a=2, b=3), answer("2 + 3 = 5")])

    response = await api.post("/v1/runs", json={"goal": "what is 2+3?"}, headers=headers())

    assert response.status_code == 201
    run = response.json()
    assert response.headers["location"] == f"/v1/runs/{run['id']}"
    assert (run["status"], run["answer"]) == ("succeeded", "2 + 3 = 5")
    assert run["usage"] == {"input_tokens": 220, "output_tokens": 18}
    again = await api.get(f"/v1/runs/{run['id']}", headers=headers())
    assert again.json()["status"] == "succeeded"
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()
    assert [(s["step_no"], s["kind"]) for s in trace["steps"]] == [(1, "llm"), (2, "tool"), (3, "llm")]
    tool_step = trace["steps"][1]
    assert tool_step["tool_name"] == "add"
    assert tool_step["arguments"] == {"a": 2, "b": 3}
    assert tool_step["result"] == {"ok": True, "output": "5.0", "error": None, "truncated": False}
    assert trace["steps"][0]["tool_calls"] == [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]


async def test_the_trace_shows_the_calls_of_one_turn_overlapping(api_factory: ApiFactory) -> None:
    both_in = asyncio.Event()
    arrived: list[str] = []

    @tool(idempotent=True)
    async def meet(who: str) -> str:
        """Wait until the other call of the turn has started too."""
        arrived.append(who)
        if len(arrived) == 2:
            both_in.set()
        await both_in.wait()
        return f"met {who}"

    turn = LLMResponse(
        tool_calls=(
            ToolCall(id=ToolCallId("c1"), name="meet", arguments={"who": "ann"}),
            ToolCall(id=ToolCallId("c2"), name="meet", arguments={"who": "bob"}),
        ),
        usage=Usage(input_tokens=100, output_tokens=10),
    )
    api = await api_factory([turn, answer("both met")], tools=[meet])

    run = (await api.post("/v1/runs", json={"goal": "meet"}, headers=headers())).json()

    assert run["status"] == "succeeded"
    steps = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()["steps"]
    first, second = (step for step in steps if step["kind"] == "tool")
    assert {first["call_id"], second["call_id"]} == {"c1", "c2"}
    # each started before the other ended: the two ran at once
    assert first["started_at"] <= second["created_at"]
    assert second["started_at"] <= first["created_at"]
    assert "started_at" not in steps[0]  # an LLM step says when it ended, and how long it took


async def test_a_run_stops_at_its_own_token_budget(api_factory: ApiFactory) -> None:
    api = await api_factory([calls("add", a=2, b=3), answer("5")])  # 110 tokens, then 128 more

    run = (await api.post("/v1/runs", json={"goal": "2+3", "token_budget": 150}, headers=headers())).json()

    assert run["token_budget"] == 150
    assert run["status"] == "failed"
    assert run["failure_reason"] == "token budget exceeded: 238 tokens spent, the budget is 150"
    stored = (await api.get(f"/v1/runs/{run['id']}", headers=headers())).json()
    assert stored["token_budget"] == 150


async def test_a_failing_tool_is_recorded_and_the_agent_recovers(api_factory: ApiFactory) -> None:
    api = await api_factory([calls("lookup", city="Lyon"), calls("lookup", "c2", city="Paris"), answer("Sunny")])

    run = (await api.post("/v1/runs", json={"goal": "weather?"}, headers=headers())).json()

    assert run["status"] == "succeeded"
    steps = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()["steps"]
    results = [s["result"] for s in steps if s["kind"] == "tool"]
    assert results[0]["ok"] is False
    assert results[0]["error"] == "no weather station in 'Lyon'; try 'Paris'"
    assert results[1]["ok"] is True


async def test_another_keys_run_does_not_exist_for_it(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("mine")])
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()

    for method, path in [
        ("GET", f"/v1/runs/{run['id']}"),
        ("GET", f"/v1/runs/{run['id']}/trace"),
        ("POST", f"/v1/runs/{run['id']}/cancel"),
    ]:
        response = await api.request(method, path, headers=headers(KEY_B))
        assert response.status_code == 404
        assert response.json()["code"] == "run_not_found"


async def test_a_session_continues_across_two_runs(api_factory: ApiFactory) -> None:
    api = await api_factory([calls("add", a=2, b=3), answer("5"), answer("You asked for 2 + 3.")])
    session = session_name()

    first = await api.post("/v1/runs", json={"goal": "2+3?", "session_id": session}, headers=headers())
    second = await api.post("/v1/runs", json={"goal": "what did I ask?", "session_id": session}, headers=headers())

    assert first.json()["status"] == second.json()["status"] == "succeeded"
    assert second.json()["session_id"] == session
    other = await api.post("/v1/runs", json={"goal": "fresh", "session_id": session}, headers=headers(KEY_B))
    assert other.status_code == 201  # the same session id under another key is another conversation


async def test_a_long_run_answers_202_and_can_be_polled(api_factory: ApiFactory) -> None:
    gate = Gate()
    api = await api_factory([calls("wait_for_gate"), answer("done")], tools=[gate_tool(gate)], response_timeout_s=0.05)

    response = await api.post("/v1/runs", json={"goal": "take your time"}, headers=headers())

    assert response.status_code == 202
    assert response.headers["retry-after"] == "1"
    location = response.headers["location"]
    assert response.json()["status"] == "running"
    pending = await api.get(location, headers=headers(), params={"wait": 0.05})
    assert pending.json()["status"] == "running"
    gate.opened.set()
    finished = await api.get(location, headers=headers(), params={"wait": 5})
    assert finished.json()["status"] == "succeeded"
    assert finished.json()["answer"] == "done"


async def test_prefer_respond_async_answers_202_at_once(api_factory: ApiFactory) -> None:
    gate = Gate()
    api = await api_factory([calls("wait_for_gate"), answer("done")], tools=[gate_tool(gate)])

    response = await api.post("/v1/runs", json={"goal": "later"}, headers=headers(Prefer="respond-async; wait=0"))

    assert response.status_code == 202
    assert response.headers["preference-applied"] == "respond-async"
    gate.opened.set()
    done = await api.get(response.headers["location"], headers=headers(), params={"wait": 5})
    assert done.json()["status"] == "succeeded"


async def test_cancel_stops_a_running_run_at_its_next_step(api_factory: ApiFactory) -> None:
    gate = Gate()
    script = [calls("wait_for_gate"), calls("add", "c2", a=1, b=1), answer("never")]
    api = await api_factory(script, tools=[gate_tool(gate), add])
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers(Prefer="respond-async"))).json()
    await asyncio.wait_for(gate.entered.wait(), 5)

    cancel = await api.post(f"/v1/runs/{run['id']}/cancel", headers=headers())

    assert cancel.status_code == 202
    assert cancel.json()["cancel_requested"] is True
    gate.opened.set()
    final = (await api.get(f"/v1/runs/{run['id']}", headers=headers(), params={"wait": 5})).json()
    assert final["status"] == "cancelled"
    steps = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()["steps"]
    assert [s.get("tool_name") for s in steps if s["kind"] == "tool"] == ["wait_for_gate"]
    again = await api.post(f"/v1/runs/{run['id']}/cancel", headers=headers())
    assert again.status_code == 200
    assert again.json()["status"] == "cancelled"


async def test_a_finished_run_cannot_be_cancelled(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("done")])
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()

    response = await api.post(f"/v1/runs/{run['id']}/cancel", headers=headers())

    assert response.status_code == 409
    assert response.json()["code"] == "run_conflict"


async def test_an_idempotent_retry_returns_the_same_run_without_a_second_llm_call(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("once")])  # a second LLM call would run out of script
    key = headers(**{"Idempotency-Key": "order-42"})

    first = await api.post("/v1/runs", json={"goal": "pay", "max_steps": 3}, headers=key)
    retry = await api.post("/v1/runs", json={"max_steps": 3, "goal": "pay"}, headers=key)
    other_body = await api.post("/v1/runs", json={"goal": "pay twice"}, headers=key)
    other_key = await api.post("/v1/runs", json={"goal": "pay"}, headers={**key, "X-API-Key": KEY_B})

    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert retry.status_code == 201
    assert retry.headers["idempotent-replayed"] == "true"
    assert retry.json()["id"] == first.json()["id"]
    assert retry.json()["answer"] == "once"
    assert other_body.status_code == 422
    assert other_body.json()["code"] == "idempotency_key_reused"
    assert other_key.status_code != 422  # keys are scoped to the API key
    assert other_key.json()["id"] != first.json()["id"]


async def test_a_reused_idempotency_key_with_another_body_is_a_422_problem_and_the_first_run_goes_on(
    api_factory: ApiFactory,
) -> None:
    gate = Gate()
    api = await api_factory([calls("wait_for_gate"), answer("paid")], tools=[gate_tool(gate)])
    key = {"Idempotency-Key": "order-7"}

    first = await api.post("/v1/runs", json={"goal": "pay"}, headers=headers(**key, Prefer="respond-async"))
    await asyncio.wait_for(gate.entered.wait(), 30)  # the first run is still going
    other = await api.post("/v1/runs", json={"goal": "pay twice"}, headers=headers(**key))
    gate.opened.set()
    again = await api.post("/v1/runs", json={"goal": "pay"}, headers=headers(**key))
    listed = (await api.get("/v1/runs", headers=headers())).json()["runs"]

    assert first.status_code == 202
    assert other.status_code == 422
    assert other.headers["content-type"] == "application/problem+json"
    problem = other.json()
    assert (problem["status"], problem["code"]) == (422, "idempotency_key_reused")
    assert problem["type"].endswith("/idempotency-key-reused")
    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert (again.json()["id"], again.json()["answer"]) == (first.json()["id"], "paid")
    assert [run["goal"] for run in listed] == ["pay"]


async def test_concurrent_requests_with_one_idempotency_key_make_one_run(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("once")] * 10)
    key = headers(**{"Idempotency-Key": "same-key"}, Prefer="respond-async")

    responses = await asyncio.gather(*(api.post("/v1/runs", json={"goal": "once"}, headers=key) for _ in range(10)))

    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 202, 409}
    ids = {r.json()["id"] for r in responses if r.status_code in (201, 202)}
    assert len(ids) == 1
    conflicts = [r.json() for r in responses if r.status_code == 409]
    assert all(c["code"] == "idempotency_conflict" for c in conflicts)


async def test_the_rate_limit_answers_429_with_retry_after(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("ok")] * 5, rate_limit_per_min=3)

    statuses = [(await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).status_code for _ in range(3)]
    limited = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())
    other_key = await api.post("/v1/runs", json={"goal": "x"}, headers=headers(KEY_B))

    assert statuses == [201, 201, 201]
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert other_key.status_code == 201


async def test_runs_and_tools_need_a_valid_api_key(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("x")])

    for request_headers in ({}, {"X-API-Key": "wrong"}):
        for method, path in [("POST", "/v1/runs"), ("GET", "/v1/runs/abc"), ("GET", "/v1/tools")]:
            response = await api.request(method, path, headers=request_headers, json={"goal": "x"})
            assert response.status_code == 401, (method, path)
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["code"] == "unauthorized"
    tools = await api.get("/v1/tools", headers=headers())
    assert [t["name"] for t in tools.json()] == ["add", "lookup"]


async def test_a_run_handed_back_when_the_server_stops_mid_run_ends_on_restart(real_api_factory: ApiFactory) -> None:
    # real state only: the restarted app must read what the stopped one stored
    api_factory = real_api_factory
    gate = Gate()
    api: ApiClient = await api_factory(
        [calls("wait_for_gate"), answer("x")], tools=[gate_tool(gate)], shutdown_grace_s=0.05
    )
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers(Prefer="respond-async"))).json()
    await asyncio.wait_for(gate.entered.wait(), 30)
    await api.__aexit__(None, None, None)

    # the restarted service resumes it at once from its stored steps (the model is not asked again:
    # its script is empty); the interrupted call is not idempotent, so the run fails saying so
    restarted = await api_factory([], tools=[gate_tool(gate)])
    final = (await restarted.get(f"/v1/runs/{run['id']}", headers=headers(), params={"wait": 30})).json()
    assert final["status"] == "failed"
    assert "interrupted while the tool 'wait_for_gate'" in final["failure_reason"]
    assert "not idempotent, so it was not run again" in final["failure_reason"]


async def test_a_tool_with_a_typed_hidden_context_runs_over_http(api_factory: ApiFactory) -> None:
    script = [calls("save_paper", title="On Loops", content="abc"), answer("Saved.")]
    api = await api_factory(script, tools=None, agentkit_tool_modules=("tests.context_tools",))

    run = (await api.post("/v1/runs", json={"goal": "save my paper"}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()

    assert run["status"] == "succeeded"
    output = trace["steps"][1]["result"]["output"]
    assert output == f"saved 'On Loops' (3 chars) to {PAPERS_DATABASE_URL} for run {run['id']} with key #6907c4e8"
    tools = (await api.get("/v1/tools", headers=headers())).json()
    saved = next(t for t in tools if t["name"] == "save_paper")
    assert set(saved["parameters"]["properties"]) == {"title", "content"}  # the context is not shown


async def test_state_in_memory_keeps_only_the_latest_ended_runs(memory_api_factory: ApiFactory) -> None:
    api = await memory_api_factory([answer(f"answer {n}") for n in range(4)], memory_max_runs=2)

    created = [(await api.post("/v1/runs", json={"goal": f"q{n}"}, headers=headers())).json() for n in range(4)]

    assert [run["status"] for run in created] == ["succeeded"] * 4
    for forgotten in created[:2]:  # the runs that ended longest ago, with everything kept of them
        assert (await api.get(f"/v1/runs/{forgotten['id']}", headers=headers())).status_code == 404
        assert (await api.get(f"/v1/runs/{forgotten['id']}/trace", headers=headers())).status_code == 404
    for run in created[2:]:
        kept = await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())
        assert kept.status_code == 200
        assert len(kept.json()["steps"]) == 1
    listed = (await api.get("/v1/runs", headers=headers())).json()
    assert [run["id"] for run in listed["runs"]] == [run["id"] for run in reversed(created[2:])]
