"""Streamed runs executed by a queue worker, followed through the API: fragments flow at once, and a client
that drops resumes with nothing lost or repeated.

The worker and the API run in this process (each its own container, on the test's PostgreSQL and
Redis), so the worker's model is the test's paced one: the client reads each fragment before the
model writes the next.
"""

import asyncio
import itertools
import json
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from dishka.integrations.litestar import LitestarProvider

from agentkit.adapters.queue import DEQUEUE_TIMEOUT_S, RunWorker
from agentkit.adapters.redis import MAX_CONNECTIONS
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.tools import ToolRegistry
from agentkit.entrypoints.wiring import make_container, started_state
from agentkit.entrypoints.wiring.settings import load_settings
from tests.http.test_streaming_api import ids_only_grow
from tests.http_fixtures import KEY_A, ApiFactory, Overrides, headers
from tests.integration import worker_process
from tests.sample_tools import add
from tests.sse_fixtures import Event, events_of, served
from tests.state_fixtures import StateServers
from tests.streaming_llm import StreamingLLM, call_turn, text_turn

pytestmark = pytest.mark.integration

WAIT_S = 120.0  # generous: only a failure waits this long
FRAGMENTS = 20


@pytest.fixture
def queue_env(state_servers: StateServers, redis_prefix: str) -> dict[str, str]:
    """Queue mode on the test's database, its Redis prefix and a queue of its own, with our key."""
    return {**worker_process.queue_env(state_servers, redis_prefix), "API_KEYS": KEY_A}


@asynccontextmanager
async def worker_running(env: dict[str, str], llm: LLMClient, **settings: object) -> AsyncIterator[RunWorker]:
    """`agentkit worker`'s container and SAQ worker, in this process, with the test's model; stopped on exit."""
    config = load_settings(env, **settings)
    async with started_state(config) as endpoints:
        overrides = Overrides(llm, ToolRegistry([add], default_timeout_s=config.tools.tool_timeout_s))
        container = make_container(config, LitestarProvider(), overrides, endpoints=endpoints)
        try:
            worker = await container.get(RunWorker)
            task = asyncio.create_task(worker.run())
            while not worker.worker.tasks:  # SAQ's upkeep tasks: it started
                assert not task.done(), task.exception()
                await asyncio.sleep(0.05)
            try:
                yield worker
            finally:
                worker.worker.event.set()
                await asyncio.wait_for(task, WAIT_S)
        finally:
            await container.close()


async def test_a_worker_with_more_slots_than_the_shared_pool_streams_without_waiting_for_connections(
    real_api_factory: ApiFactory, queue_env: dict[str, str]
) -> None:
    # more idle slots than the shared Redis pool has connections: each slot's blocking take (BLMOVE)
    # holds one for up to DEQUEUE_TIMEOUT_S; on the shared pool every other command then waited for one
    concurrency = MAX_CONNECTIONS + 20
    llm = StreamingLLM([text_turn("|".join(f"w{n} " for n in range(FRAGMENTS)))], paced=True)
    api = await real_api_factory(run_mode="queue", run_queue_name=queue_env["RUN_QUEUE_NAME"])
    async with (
        worker_running(queue_env, llm, worker_concurrency=concurrency, shutdown_grace_s=1),
        served(api.app) as url,
        httpx.AsyncClient(base_url=url, headers=headers(), timeout=WAIT_S) as client,
        client.stream("POST", "/v1/runs", json={"goal": "count", "stream": True}) as response,
    ):
        assert response.status_code == 200, await response.aread()
        arrivals: list[float] = []
        texts: list[str] = []
        kinds: list[str] = []
        async for event in events_of(response):
            if event.event is None:
                continue
            kinds.append(event.event)
            if event.event == "delta":
                arrivals.append(time.monotonic())
                texts.append(event.data["text"])
                llm.go()  # the model writes its next fragment only once this one arrived
        stored = (await client.get(response.headers["location"])).json()

    assert kinds[-1] == "status"
    assert stored["status"] == "succeeded"
    assert "".join(texts) == stored["answer"]
    assert len(texts) == FRAGMENTS
    # from the model's fragment to the client and back, each a few milliseconds on an idle machine; a
    # command that waits for a pooled connection waits for a take to end (DEQUEUE_TIMEOUT_S), so the
    # median gap shows it (a bound far above a loaded machine's own pace)
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert statistics.median(gaps) < DEQUEUE_TIMEOUT_S / 2, gaps


async def test_a_client_of_the_api_that_drops_mid_answer_resumes_a_run_a_worker_streams_with_nothing_lost_or_repeated(
    real_api_factory: ApiFactory, queue_env: dict[str, str]
) -> None:
    llm = StreamingLLM([call_turn("c1", "add", ['{"a": ', '2, "b"', ": 3}"]), text_turn("one| two| three")], paced=True)
    api = await real_api_factory(run_mode="queue", run_queue_name=queue_env["RUN_QUEUE_NAME"])
    async with (
        worker_running(queue_env, llm, shutdown_grace_s=1),
        served(api.app) as url,
        httpx.AsyncClient(base_url=url, headers=headers(), timeout=WAIT_S) as client,
    ):
        before: list[Event] = []
        async with client.stream("POST", "/v1/runs", json={"goal": "add", "stream": True}) as response:
            async for event in events_of(response):
                if event.event is not None:
                    before.append(event)
                if event.event == "delta":
                    break  # the model waits after the call's first piece; the client goes away
        path = response.headers["location"] + "/events"
        async with client.stream("GET", path, headers={"Last-Event-ID": before[-1].id or ""}) as resumed:
            llm.go()
            after = [event async for event in paced(resumed, llm)]
        trace = (await client.get(f"{response.headers['location']}/trace")).json()

    events = before + after
    assert ids_only_grow(events)
    assert len({e.id for e in events}) == len(events)  # none twice
    call = [e.data["text"] for e in events if e.event == "delta" and e.data["step_no"] == 1]
    text = [e.data["text"] for e in events if e.event == "delta" and e.data["step_no"] == 3]
    assert json.loads("".join(call)) == trace["steps"][0]["tool_calls"][0]["arguments"] == {"a": 2, "b": 3}
    assert "".join(text) == trace["steps"][2]["text"] == "one two three"
    assert [e.data for e in events if e.event == "step"] == trace["steps"]
    assert events[-1].data["status"] == "succeeded"


async def paced(response: httpx.Response, llm: StreamingLLM) -> AsyncIterator[Event]:
    """The stream's events; each fragment lets the model write the next."""
    assert response.status_code == 200, await response.aread()
    async for event in events_of(response):
        if event.event is None:
            continue
        yield event
        if event.event == "delta":
            llm.go()
