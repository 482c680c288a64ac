"""Everything a run did, over HTTP: the exact prompts, costs, listing and sessions, on memory and on real servers."""

import asyncio
from typing import Any

import msgspec
import pytest

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.tools import tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall, Usage
from agentkit.entrypoints.http.dto.messages import message_view
from agentkit.entrypoints.http.dto.tools import tool_view
from tests.http_fixtures import KEY_A, KEY_B, ApiFactory, headers, session_name


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


def calls(name: str, call_id: str = "c1", **arguments: Any) -> LLMResponse:
    return LLMResponse(
        tool_calls=(ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments),),
        usage=Usage(input_tokens=1000, output_tokens=100),
    )


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=1200, output_tokens=50))


@tool
def login(user: str, password: str) -> str:
    """Log a user in.

    Args:
        user: Who.
        password: Their password.
    """
    return f"welcome {user}"


def wire(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


async def test_the_trace_with_prompts_is_exactly_what_the_model_received(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient([calls("add", a=2, b=3), calls("add", "c2", a=5, b=1), answer("6")])
    api = await api_factory(llm=llm)

    run = (await api.post("/v1/runs", json={"goal": "2+3, then +1"}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace?include=prompts", headers=headers())).json()

    llm_steps = [step for step in trace["steps"] if step["kind"] == "llm"]
    assert len(llm_steps) == len(llm.requests) == 3
    for step, (sent_messages, sent_tools) in zip(llm_steps, llm.requests, strict=True):
        count = step["request"]["message_count"]
        assert [stored["message"] for stored in trace["messages"][:count]] == wire(
            [message_view(m) for m in sent_messages]
        )
        assert trace["tool_sets"][step["request"]["tools_digest"]] == wire([tool_view(t) for t in sent_tools])
        assert (step["request"]["provider"], step["request"]["model"]) == ("scripted", "script")
    # each message once: the last call's 6 messages, not the 2 + 4 + 6 the calls sent
    assert [stored["seq"] for stored in trace["messages"]] == [1, 2, 3, 4, 5, 6]
    assert len(trace["tool_sets"]) == 1
    assert trace["messages"][1]["message"] == {"role": "user", "content": "2+3, then +1"}
    plain = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()
    assert "messages" not in plain
    assert plain["steps"][0]["request"]["message_count"] == 2


async def test_secrets_are_never_stored_and_named_fields_are_redacted(api_factory: ApiFactory) -> None:
    secret = "sk-live-0123456789abcdef"
    script = [calls("login", user="ann", password="hunter2"), answer(f"done; your key is {secret}")]
    api = await api_factory(script, tools=[login], openai_api_key=secret, trace_redact_fields=("password",))

    goal = f"log ann in with key {secret} (and mine is {KEY_A})"
    run = (await api.post("/v1/runs", json={"goal": goal}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace?include=prompts", headers=headers())).json()

    text = msgspec.json.encode(trace).decode()
    assert secret not in text
    assert KEY_A not in text
    assert "hunter2" not in text
    assert trace["messages"][1]["message"]["content"] == "log ann in with key [redacted] (and mine is [redacted])"
    assert trace["messages"][2]["message"]["tool_calls"][0]["arguments"] == {"user": "ann", "password": "[redacted]"}
    assert trace["steps"][1]["arguments"] == {"user": "ann", "password": "[redacted]"}
    assert run["status"] == "succeeded"  # the run itself saw the real values


async def test_without_payloads_only_roles_names_and_digests_are_stored(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient([calls("add", a=2, b=3), answer("5")])
    api = await api_factory(llm=llm, trace_payloads=False)

    run = (await api.post("/v1/runs", json={"goal": "private maths"}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace?include=prompts", headers=headers())).json()

    assert "private maths" not in msgspec.json.encode(trace).decode()
    assert [stored["message"]["role"] for stored in trace["messages"]] == ["system", "user", "assistant", "tool"]
    assert trace["messages"][2]["message"]["tool_calls"] == [{"id": "c1", "name": "add", "arguments": {}}]
    assert trace["steps"][0]["request"]["payloads"] is False
    assert trace["steps"][1]["arguments"] == {}
    goal_message = llm.requests[0][0][1]
    assert trace["messages"][1]["digest"] == digest(goal_message)


def digest(message: Message) -> str:
    import hashlib

    return hashlib.sha256(msgspec.json.encode(message, order="sorted")).hexdigest()


async def test_cost_per_step_and_per_run_from_the_price_table(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient([calls("add", a=2, b=3), answer("5")], provider="openai", model="gpt-4o-mini")
    api = await api_factory(llm=llm)

    run = (await api.post("/v1/runs", json={"goal": "2+3"}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()

    # gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens
    costs = [step["cost_usd"] for step in trace["steps"] if step["kind"] == "llm"]
    assert costs == pytest.approx([0.00015 + 0.00006, 0.00018 + 0.00003])
    assert run["cost_usd"] == pytest.approx(sum(costs))
    assert trace["cost_usd"] == pytest.approx(sum(costs))


async def test_an_unknown_price_is_null_never_zero(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("hi")])  # the scripted provider has no price

    run = (await api.post("/v1/runs", json={"goal": "hi"}, headers=headers())).json()
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()

    assert run["cost_usd"] is None
    assert "cost_usd" not in trace["steps"][0]


async def test_a_run_stops_at_its_cost_budget(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient([calls("add", a=2, b=3), answer("5")], provider="openai", model="gpt-4o-mini")
    api = await api_factory(llm=llm)

    run = (await api.post("/v1/runs", json={"goal": "2+3", "cost_budget": 0.0001}, headers=headers())).json()

    assert (run["status"], run["cost_budget"]) == ("failed", 0.0001)
    assert run["failure_reason"] == "cost budget exceeded: $0.00021 spent, the budget is $0.0001"
    assert len(llm.requests) == 1


async def test_a_cost_budget_with_an_unknown_price_stops_after_the_first_call(api_factory: ApiFactory) -> None:
    api = await api_factory([calls("add", a=2, b=3), answer("5")])

    run = (await api.post("/v1/runs", json={"goal": "2+3", "cost_budget": 1.0}, headers=headers())).json()

    assert (run["status"], run["failure_reason"]) == (
        "failed",
        "the cost budget cannot be kept: the model's price is unknown",
    )
    bad = await api.post("/v1/runs", json={"goal": "x", "cost_budget": 0}, headers=headers())
    assert (bad.status_code, bad.json()["code"]) == (422, "validation_error")


async def test_250_runs_page_by_100_with_none_missing_or_repeated_under_concurrent_inserts(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory(
        llm=ScriptedLLMClient([answer("ok")], per_conversation=True),
        rate_limit_per_min=100_000,
        max_runs_in_flight=1000,
    )
    api_b_runs = await api.get("/v1/runs", headers=headers(KEY_B))
    assert api_b_runs.json() == {"runs": [], "next_cursor": None, "next": None}

    async def create(goal: str) -> str:
        response = await api.post("/v1/runs", json={"goal": goal}, headers=headers(Prefer="respond-async"))
        assert response.status_code == 202, response.text
        run_id: str = response.json()["id"]
        return run_id

    first = [await create(f"run {n}") for n in range(250)]

    seen: list[str] = []
    pages = 0
    url: str | None = "/v1/runs?limit=100"
    inserting: list[asyncio.Task[str]] = []
    while url is not None:
        # runs created while paging are newer than every cursor: they must not shift a page
        inserting += [asyncio.create_task(create(f"late {pages}-{n}")) for n in range(10)]
        page = (await api.get(url, headers=headers())).json()
        seen += [run["id"] for run in page["runs"]]
        url = page["next"]
        pages += 1
    late = await asyncio.gather(*inserting)

    assert len(seen) == len(set(seen)), "a run was listed twice"
    assert set(first) <= set(seen), "a run that existed before paging was skipped"
    assert set(seen) <= set(first) | set(late)
    assert pages >= 3
    assert (await api.get("/v1/runs", headers=headers(KEY_B))).json()["runs"] == []


async def test_runs_are_filtered_by_status_session_and_time(api_factory: ApiFactory) -> None:
    api = await api_factory(llm=ScriptedLLMClient([answer("ok")], per_conversation=True), rate_limit_per_min=1000)
    session = session_name()
    ok = (await api.post("/v1/runs", json={"goal": "a", "session_id": session}, headers=headers())).json()
    other = (await api.post("/v1/runs", json={"goal": "b"}, headers=headers())).json()
    pending = (await api.post("/v1/runs", json={"goal": "c"}, headers=headers(Prefer="respond-async"))).json()

    by_session = (await api.get(f"/v1/runs?session_id={session}", headers=headers())).json()
    succeeded = (await api.get("/v1/runs?status=succeeded&limit=200", headers=headers())).json()
    before = (await api.get("/v1/runs", params={"created_before": other["created_at"]}, headers=headers())).json()
    after = (await api.get("/v1/runs", params={"created_after": other["created_at"]}, headers=headers())).json()

    assert [run["id"] for run in by_session["runs"]] == [ok["id"]]
    assert {ok["id"], other["id"]} <= {run["id"] for run in succeeded["runs"]}
    assert all(run["status"] == "succeeded" for run in succeeded["runs"])
    assert [run["id"] for run in before["runs"]] == [ok["id"]]
    assert [run["id"] for run in after["runs"]][-1] == other["id"]
    assert pending["id"] in {run["id"] for run in after["runs"]}


async def test_a_bad_listing_is_a_problem(api_factory: ApiFactory) -> None:
    api = await api_factory([])

    bad_cursor = await api.get("/v1/runs?cursor=not-a-cursor", headers=headers())
    naive = await api.get("/v1/runs", params={"created_after": "2026-01-01T00:00:00"}, headers=headers())
    too_many = await api.get("/v1/runs?limit=1000", headers=headers())
    bad_status = await api.get("/v1/runs?status=finished", headers=headers())
    no_key = await api.get("/v1/runs")
    empty_range = await api.get(
        "/v1/runs",
        params={"created_after": "2026-01-02T00:00:00Z", "created_before": "2026-01-01T00:00:00Z"},
        headers=headers(),
    )

    assert (bad_cursor.status_code, bad_cursor.json()["code"]) == (404, "cursor_not_found")
    assert (naive.status_code, naive.json()["code"]) == (422, "invalid_listing")
    assert (too_many.status_code, too_many.json()["code"]) == (422, "validation_error")
    assert (bad_status.status_code, bad_status.json()["code"]) == (422, "validation_error")
    assert no_key.status_code == 401
    assert (empty_range.status_code, empty_range.json()["runs"]) == (200, [])


async def test_a_session_can_be_read_and_forgotten_by_its_owner_only(api_factory: ApiFactory) -> None:
    api = await api_factory(llm=ScriptedLLMClient([answer("hello")], per_conversation=True))
    session = session_name()
    await api.post("/v1/runs", json={"goal": "hi there", "session_id": session}, headers=headers())

    read = await api.get(f"/v1/sessions/{session}", headers=headers())
    other_key = await api.get(f"/v1/sessions/{session}", headers=headers(KEY_B))
    other_delete = await api.delete(f"/v1/sessions/{session}", headers=headers(KEY_B))
    deleted = await api.delete(f"/v1/sessions/{session}", headers=headers())
    after = await api.get(f"/v1/sessions/{session}", headers=headers())
    again = await api.delete(f"/v1/sessions/{session}", headers=headers())
    bad = await api.get("/v1/sessions/has%20space", headers=headers())

    assert read.status_code == 200
    assert read.json() == {
        "session_id": session,
        "messages": [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}],
    }
    assert (other_key.status_code, other_key.json()["code"]) == (404, "session_not_found")
    assert other_delete.status_code == 404
    assert deleted.status_code == 204
    assert (after.status_code, again.status_code) == (404, 404)
    assert bad.status_code == 422
