"""The spec's definition of done, through HTTP: a SQL query then a calculation, with the real tools."""

import json
from pathlib import Path

import pytest

from agentkit.adapters.llm.demo import DemoLLMClient
from agentkit.adapters.llm.scripted import ScriptedLLMClient, load_script
from tests.demo_fixtures import DemoDatabase
from tests.http_fixtures import ApiFactory, headers

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).parents[3] / "examples" / "scripts" / "top_customer.json"


@pytest.mark.parametrize("model", ["script", "demo"])
async def test_a_two_tool_run_answers_right_and_its_trace_shows_both_calls(
    api_factory: ApiFactory, demo_db: DemoDatabase, model: str
) -> None:
    # "demo" is what `make run` serves when no provider is configured
    llm = ScriptedLLMClient(load_script(SCRIPT)) if model == "script" else DemoLLMClient()
    api = await api_factory(
        llm=llm,
        tools=None,  # the built-in tools, as a user gets them
        demo_database=demo_db.database,
        postgres_readonly_user=demo_db.reader,
        postgres_readonly_password=demo_db.password,
    )

    created = await api.post(
        "/v1/runs", json={"goal": "How much did our top customer spend, and what is 15% of that?"}, headers=headers()
    )

    assert created.status_code == 201
    run = created.json()
    assert run["status"] == "succeeded"
    assert "Margaret Hamilton" in run["answer"]
    assert "$2,870.79" in run["answer"]
    assert "$430.62" in run["answer"]
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()["steps"]
    tools = [step for step in trace if step["kind"] == "tool"]
    assert [step["tool_name"] for step in tools] == ["sql_readonly", "calculator"]
    assert all(step["result"]["ok"] for step in tools)
    assert "Margaret Hamilton | 2870.79" in tools[0]["result"]["output"]
    assert tools[1]["result"]["output"] == "430.6185"
    assert sum(step["input_tokens"] for step in trace) == run["usage"]["input_tokens"]
    assert json.loads(json.dumps(trace))  # the whole trace is plain JSON
