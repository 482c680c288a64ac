"""Live run events across processes: a queue worker executes the run, the API streams it; `agentkit run --follow`."""

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.http_fixtures import KEY_A, ApiFactory, headers
from tests.integration.worker_process import queue_env, worker_process
from tests.sse_fixtures import read_all, served
from tests.state_fixtures import StateServers

pytestmark = pytest.mark.integration

WAIT_S = 120.0  # generous: a worker's cold start on a loaded machine; only a failure waits this long
SCRIPT = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}], "input_tokens": 30},
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "42 + 1"}}], "input_tokens": 35},
    {"text": "43", "input_tokens": 40, "output_tokens": 2},
]


@pytest.fixture
def worker(state_servers: StateServers, redis_prefix: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """`agentkit worker` in a process of its own on the test's database, Redis prefix and queue."""
    with worker_process(queue_env(state_servers, redis_prefix), SCRIPT, tmp_path) as env:
        yield env


async def test_a_run_a_worker_executes_is_streamed_by_the_api_process(
    real_api_factory: ApiFactory, worker: dict[str, str]
) -> None:
    api = await real_api_factory(run_mode="queue", run_queue_name=worker["RUN_QUEUE_NAME"])
    async with served(api.app) as url, httpx.AsyncClient(base_url=url, headers=headers(), timeout=WAIT_S) as client:
        created = await client.post("/v1/runs", json={"goal": "6*7+1?"}, headers={"Prefer": "respond-async"})
        run_id = created.json()["id"]

        events = await asyncio.wait_for(read_all(client, f"/v1/runs/{run_id}/events"), WAIT_S)
        trace = (await client.get(f"/v1/runs/{run_id}/trace")).json()

    assert [(e.event, e.data.get("status") or e.data.get("step_no")) for e in events] == [
        ("status", "pending"),  # written by the API process
        ("status", "running"),  # the rest by the worker
        ("step", 1),
        ("step", 2),
        ("step", 3),
        ("step", 4),
        ("step", 5),
        ("status", "succeeded"),
    ]
    assert [e.data for e in events if e.event == "step"] == trace["steps"]
    assert events[-1].data["answer"] == "43"


async def test_agentkit_run_follow_prints_a_run_of_the_api_as_it_happens(real_api_factory: ApiFactory) -> None:
    from tests.http.test_runs_api import answer, calls

    api = await real_api_factory([calls("add", "c1", a=2, b=3), answer("2 + 3 = 5")])
    run_id = (await api.post("/v1/runs", json={"goal": "2+3"}, headers=headers())).json()["id"]
    async with served(api.app) as url:

        def follow(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
                [sys.executable, "-m", "agentkit", "run", *argv],
                env={**os.environ, "API_KEYS": KEY_A, "AGENTKIT_ENV_FILE": os.devnull},
                capture_output=True,
                text=True,
                timeout=WAIT_S,
                check=False,
            )

        done = await asyncio.to_thread(follow, "--follow", run_id, "--url", url)
        unknown = await asyncio.to_thread(follow, "--follow", "00000000-0000-0000-0000-000000000000", "--url", url)
        as_json = await asyncio.to_thread(follow, "--follow", run_id, "--url", url, "--json")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["status: pending", "status: running"]
    assert lines[2].startswith("[1] llm")
    assert lines[2].endswith('-> add({"a":2,"b":3})')
    assert lines[3].startswith("[2] tool")
    assert lines[4] == "      = 5.0"
    assert lines[5].startswith("[3] llm")
    assert "status: succeeded" in done.stdout
    assert done.stdout.rstrip().endswith("2 + 3 = 5")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        2,
        "agentkit: no run with id '00000000-0000-0000-0000-000000000000'",
    )
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [event["event"] for event in events] == ["status", "status", "step", "step", "step", "status"]
