"""An A2A task executed by a queue worker: the API process takes the message, `agentkit worker` runs it."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import GetTaskRequest, SendMessageRequest, TaskState

from tests.a2a_fixtures import a2a_client, collect
from tests.http_fixtures import ApiFactory, headers
from tests.integration.worker_process import queue_env, worker_process
from tests.state_fixtures import StateServers

pytestmark = pytest.mark.integration

WAIT_S = 120.0  # generous: a worker's cold start on a loaded machine; only a failure waits this long
SCRIPT = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}], "input_tokens": 30},
    {"text": "42", "input_tokens": 40, "output_tokens": 2},
]


@pytest.fixture
def worker(state_servers: StateServers, redis_prefix: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """`agentkit worker` in a process of its own on the test's database, Redis prefix and queue."""
    with worker_process(queue_env(state_servers, redis_prefix), SCRIPT, tmp_path) as env:
        yield env


async def test_a_streamed_a2a_task_runs_on_a_queue_worker_and_is_the_run_of_the_same_id(
    real_api_factory: ApiFactory, worker: dict[str, str]
) -> None:
    api = await real_api_factory(run_mode="queue", run_queue_name=worker["RUN_QUEUE_NAME"])
    async with a2a_client(api, streaming=True) as a2a:
        request = SendMessageRequest(message=new_text_message("what is 6 * 7?"))
        events = await asyncio.wait_for(collect(a2a.client.send_message(request)), WAIT_S)
        task_id = events[0].task.id
        got = await a2a.blocking().get_task(GetTaskRequest(id=task_id))

    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED  # stored by the API process
    assert TaskState.TASK_STATE_WORKING in states  # the rest written by the worker
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == "42"
    trace = (await api.get(f"/v1/runs/{task_id}/trace", headers=headers())).json()
    assert [step.get("tool_name") for step in trace["steps"] if step["kind"] == "tool"] == ["calculator"]
