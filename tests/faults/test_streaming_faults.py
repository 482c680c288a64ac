"""A streamed run whose worker is killed (kill -9) mid-answer: another worker resumes it and streams the call
again; the clients see a `retry` marker (a `reset-step` in the UI message stream) and never the two
attempts' text mixed.

The real processes (`agentkit serve` and `agentkit worker`, queue mode) on private PostgreSQL and
Redis; the model is an OpenAI-compatible server on loopback that streams each answer a piece at a
time, as the test reads them (`tests.faults.streaming_model`).
"""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.faults.app import API_KEY, AppServer
from tests.faults.conftest import FaultStack
from tests.faults.streaming_model import PacedStreamingModel, pieces
from tests.http.test_streaming_api import ids_only_grow, ui_chunks
from tests.sse_fixtures import Event, events_of
from tests.ui_message_protocol import read_message

pytestmark = pytest.mark.faults

WAIT_S = 180.0  # generous: a lease to lapse, a sweep and a cold worker on a loaded machine; only a failure waits
PIECES, HANG_AFTER = 6, 3


def queue_process(stack: FaultStack, name: str, command: str, model_url: str) -> AppServer:
    """`agentkit serve` or `agentkit worker` in queue mode on the stack, its model the streaming server."""
    return stack.app(
        name,
        command=command,
        RUN_MODE="queue",
        RUN_LEASE_S="3",
        MAX_RUN_ATTEMPTS="3",
        WORKER_CONCURRENCY="5",
        SHUTDOWN_GRACE_S="1",
        LLM_PROVIDER="openai",
        LLM_BASE_URL=model_url,
        LLM_MODEL="fault-model",
        OPENAI_API_KEY="sk-fault-" + "0" * 20,
        LLM_MAX_RETRIES="1",
        RESPONSE_TIMEOUT_S="60",
    )


@pytest.fixture
async def model() -> AsyncIterator[PacedStreamingModel]:
    """The streaming model server: the first answer hangs after HANG_AFTER pieces."""
    with PacedStreamingModel(count=PIECES, hang_after=HANG_AFTER) as server:
        yield server


async def test_a_worker_killed_mid_stream_leaves_another_to_stream_the_call_again_behind_a_retry_marker(
    stack: FaultStack, model: PacedStreamingModel
) -> None:
    api = queue_process(stack, "api", "serve", model.url)
    first = queue_process(stack, "worker-0", "worker", model.url)
    after = queue_process(stack, "worker-after", "worker", model.url)
    try:
        await asyncio.to_thread(api.start)
        await asyncio.to_thread(first.start)
        async with httpx.AsyncClient(base_url=api.url, headers={"X-API-Key": API_KEY}, timeout=WAIT_S) as client:

            async def follow(path: str) -> list[Event]:
                """The run's events to its end; each text fragment lets the model go on, but the one it hangs after:
                the worker writing it is killed then, and another started."""
                seen: list[Event] = []
                async with client.stream("GET", path) as response:
                    assert response.status_code == 200, await response.aread()
                    async for event in events_of(response):
                        if event.event is None:
                            continue
                        seen.append(event)
                        if event.event != "delta" or event.data["kind"] != "text":
                            continue
                        written = "".join(e.data.get("text", "") for e in seen if e.event == "delta")
                        if model.requests == 1 and written.endswith(pieces(1, HANG_AFTER)[-1]):
                            await asyncio.to_thread(first.kill)  # mid-stream: the model is still writing
                            await asyncio.to_thread(after.start)
                        else:
                            model.go()
                return seen

            async with client.stream("POST", "/v1/runs?format=vercel", json={"goal": "count"}) as ui:
                assert ui.status_code == 200, await ui.aread()
                run_path = ui.headers["location"]
                following = asyncio.create_task(follow(f"{run_path}/events"))
                chunks = await asyncio.wait_for(ui_chunks(ui), WAIT_S)
            events = await asyncio.wait_for(following, WAIT_S)
            run = (await client.get(run_path)).json()
            trace = (await client.get(f"{run_path}/trace")).json()
    finally:
        for process in (after, first, api):
            await asyncio.to_thread(process.kill)

    assert run["status"] == "succeeded"
    assert after.count("run_resumed")["run_resumed"] == 1  # taken over by the other worker, not started over
    answer = "".join(pieces(2, PIECES))  # the second request's, whole
    assert run["answer"].strip() == answer.strip()
    assert model.requests == 2
    deltas = [e.data for e in events if e.event == "delta"]
    assert {d["step_no"] for d in deltas} == {1}
    kinds = [d["kind"] for d in deltas]
    assert kinds.count("retry") == 1
    marker = kinds.index("retry")
    before, retried = deltas[:marker], deltas[marker + 1 :]
    assert "".join(d["text"] for d in before) == "".join(pieces(1, HANG_AFTER))  # what the killed worker streamed
    assert "".join(d["text"] for d in retried) == answer  # after the marker, the retried call's text alone
    steps = [e.data for e in events if e.event == "step"]
    assert steps == trace["steps"]
    assert steps[0]["text"] == run["answer"]
    assert events[-1].data["status"] == "succeeded"
    assert ids_only_grow(events)
    # the UI message stream: the step is reset at the marker, so the message holds the second answer alone
    types = [chunk if chunk == "[DONE]" else chunk["type"] for chunk in chunks]
    assert types.count("reset-step") == 1
    message = read_message(chunks[:-1])
    texts: list[Any] = [part["text"] for part in message["parts"] if part["type"] == "text"]
    assert [text.strip() for text in texts] == [answer.strip()]
    assert (message["errors"], message["finish_reason"]) == ([], "stop")
