"""GET /v1/runs/{id}/events: a run's status changes and steps as Server-Sent Events, read with httpx from a
server on loopback; on in-memory state and on real PostgreSQL and Redis."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
import schemathesis
from dishka import Provider, Scope, provide
from redis.asyncio import Redis

from agentkit.adapters.memory import InMemoryRunEventLog
from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.run_event_log import EventId, LoggedEvent, RunEvent, RunEventLog
from agentkit.domain.ids import RunId
from tests.http.test_runs_api import answer, calls, gate_tool
from tests.http_fixtures import KEY_B, ApiClient, ApiFactory, Gate, headers
from tests.sample_tools import add
from tests.sse_fixtures import Event, events_of, read_all, served

WAIT_S = 30.0  # generous: only a failure waits this long
ASYNC = {"Prefer": "respond-async"}


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


def gated_script() -> list[Any]:
    """add, then the gate (held until the test opens it), then the answer: five steps."""
    return [calls("add", "c1", a=1, b=2), calls("wait_for_gate", "c2"), answer("done")]


async def start_run(api: ApiClient) -> str:
    response = await api.post("/v1/runs", json={"goal": "follow me"}, headers=headers(**ASYNC))
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


ClientOf = Callable[[ApiClient], Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def client_of() -> AsyncIterator[ClientOf]:
    """Serves an app on loopback and gives an httpx client on it (key A); both closed after the test."""
    async with contextlib.AsyncExitStack() as stack:

        async def enter(api: ApiClient) -> httpx.AsyncClient:
            url = await stack.enter_async_context(served(api.app))
            client = httpx.AsyncClient(base_url=url, headers=headers(), timeout=WAIT_S)
            return await stack.enter_async_context(client)

        yield enter


def sequence(events: list[Event]) -> list[tuple[str | None, str | None, Any]]:
    return [(event.id, event.event, event.data) for event in events]


async def test_a_multi_step_run_streams_its_statuses_and_every_step_then_ends(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    api = await api_factory([calls("add", "c1", a=2, b=3), calls("lookup", "c2", city="Paris"), answer("done")])
    client = await client_of(api)
    run_id = await start_run(api)

    events = await read_all(client, f"/v1/runs/{run_id}/events")

    kinds = [(e.event, e.data["status"] if e.event == "status" else e.data["step_no"]) for e in events]
    assert kinds == [
        ("status", "pending"),
        ("status", "running"),
        ("step", 1),
        ("step", 2),
        ("step", 3),
        ("step", 4),
        ("step", 5),
        ("status", "succeeded"),
    ]
    # a step is what the trace shows, a status is what GET /v1/runs/{id} shows
    trace = (await api.get(f"/v1/runs/{run_id}/trace", headers=headers())).json()
    assert [e.data for e in events if e.event == "step"] == trace["steps"]
    assert events[-1].data == (await api.get(f"/v1/runs/{run_id}", headers=headers())).json()
    ids = [e.id for e in events]
    assert all(ids)
    assert len(set(ids)) == len(ids)


async def test_a_client_that_drops_mid_run_resumes_with_last_event_id_missing_and_repeating_nothing(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    gate = Gate()
    api = await api_factory(gated_script(), tools=[add, gate_tool(gate)])
    client = await client_of(api)
    run_id = await start_run(api)
    path = f"/v1/runs/{run_id}/events"

    before: list[Event] = []
    async with client.stream("GET", path) as response:
        async for event in events_of(response):
            if event.event is not None:
                before.append(event)
            if event.event == "step" and event.data["step_no"] == 3:
                break  # the run now waits at the gate; the client goes away
    await asyncio.wait_for(gate.entered.wait(), WAIT_S)
    gate.opened.set()  # the run goes on while nobody listens
    after = await read_all(client, path, **{"Last-Event-ID": before[-1].id or ""})

    whole = await read_all(client, path)
    assert sequence(before + after) == sequence(whole)
    assert [e.data.get("step_no") for e in after] == [4, 5, None]
    assert after[-1].data["status"] == "succeeded"
    # `?after=` does the same for clients that cannot set the header
    assert sequence(await read_all(client, f"{path}?after={before[-1].id}")) == sequence(after)


async def test_a_quiet_stream_sends_keep_alive_comments(api_factory: ApiFactory, client_of: ClientOf) -> None:
    gate = Gate()
    api = await api_factory(gated_script(), tools=[add, gate_tool(gate)], sse_keepalive_s=0.05)
    client = await client_of(api)
    run_id = await start_run(api)

    seen: list[Event] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        async for event in events_of(response):
            seen.append(event)
            if gate.entered.is_set() and event.comments == ["keep-alive"] and event.event is None:
                gate.opened.set()  # a keep-alive came while the run waited: let it finish

    assert any(e.comments == ["keep-alive"] for e in seen)
    assert seen[-1].event == "status"
    assert seen[-1].data["status"] == "succeeded"


async def test_another_key_and_unknown_runs_get_404_and_a_bad_event_id_422(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("done")])
    run_id = (await api.post("/v1/runs", json={"goal": "hi"}, headers=headers())).json()["id"]

    other = await api.get(f"/v1/runs/{run_id}/events", headers=headers(KEY_B))
    unknown = await api.get("/v1/runs/00000000-0000-0000-0000-000000000000/events", headers=headers())
    bad_id = await api.get(f"/v1/runs/{run_id}/events", headers=headers(**{"Last-Event-ID": "yesterday"}))
    no_key = await api.get(f"/v1/runs/{run_id}/events")

    assert (other.status_code, other.json()["code"]) == (404, "run_not_found")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "run_not_found")
    assert (bad_id.status_code, bad_id.json()["code"]) == (422, "validation_error")
    assert no_key.status_code == 401


async def test_a_run_whose_events_expired_streams_its_stored_status_and_ends(
    real_api_factory: ApiFactory, redis_client: Redis, redis_prefix: str, client_of: ClientOf
) -> None:
    api = await real_api_factory([answer("done")])
    client = await client_of(api)
    run_id = (await api.post("/v1/runs", json={"goal": "hi"}, headers=headers())).json()["id"]
    whole = await read_all(client, f"/v1/runs/{run_id}/events")
    await redis_client.delete(f"{redis_prefix}run-events:{run_id}")

    late = await read_all(client, f"/v1/runs/{run_id}/events")

    assert [(e.id, e.event) for e in late] == [("0-0", "status")]
    assert late[0].data == whole[-1].data  # the stored run, succeeded


class FlakyEventLog(InMemoryRunEventLog):
    """The in-memory log with an outage switch: while `down`, appends are dropped and reads fail."""

    down = False

    def append(self, run_id: RunId, event: RunEvent) -> None:
        if not self.down:
            super().append(run_id, event)

    async def read(
        self, run_id: RunId, *, after: EventId | None, block_s: float, limit: int = 100
    ) -> list[LoggedEvent]:
        if self.down:
            raise StoreUnavailable("Redis is unavailable (ConnectionError)")
        return await super().read(run_id, after=after, block_s=block_s, limit=limit)


class LogProvider(Provider):
    def __init__(self, log: RunEventLog) -> None:
        super().__init__()
        self._log = log

    @provide(scope=Scope.APP)
    def log(self) -> RunEventLog:
        return self._log


async def test_with_the_event_store_down_runs_go_on_and_a_new_stream_is_a_503(
    memory_api_factory: ApiFactory,
) -> None:
    log = FlakyEventLog()
    log.down = True
    api = await memory_api_factory([answer("done")], providers=[LogProvider(log)])

    run = (await api.post("/v1/runs", json={"goal": "hi"}, headers=headers())).json()
    response = await api.get(f"/v1/runs/{run['id']}/events", headers=headers())

    assert run["status"] == "succeeded"
    assert response.status_code == 503
    assert response.json()["code"] == "store_unavailable"
    assert response.headers["retry-after"] == "5"


async def test_a_stream_rides_out_an_outage_and_ends_with_the_stored_status(
    memory_api_factory: ApiFactory, client_of: ClientOf
) -> None:
    log = FlakyEventLog()
    gate = Gate()
    api = await memory_api_factory(
        gated_script(), tools=[add, gate_tool(gate)], providers=[LogProvider(log)], sse_keepalive_s=0.05
    )
    client = await client_of(api)
    run_id = await start_run(api)

    seen: list[Event] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        async for event in events_of(response):
            seen.append(event)
            if event.event == "step" and event.data["step_no"] == 3:
                log.down = True  # the rest of the run's events are lost
                await asyncio.wait_for(gate.entered.wait(), WAIT_S)
                gate.opened.set()

    assert response.status_code == 200
    steps = [e.data["step_no"] for e in seen if e.event == "step"]
    assert steps == [1, 2, 3]
    assert any(e.comments == ["keep-alive"] for e in seen)
    assert seen[-1].event == "status"
    assert seen[-1].data["status"] == "succeeded"
    assert seen[-1].id == next(e.id for e in seen if e.event == "step" and e.data["step_no"] == 3)


async def test_a_paused_run_streams_its_wait_then_goes_on_once_approved(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    api = await api_factory([calls("add", "c1", a=2, b=3), answer("5")])
    client = await client_of(api)
    response = await api.post(
        "/v1/runs", json={"goal": "add, with approval", "approval_required": ["add"]}, headers=headers(**ASYNC)
    )
    run_id = response.json()["id"]
    path = f"/v1/runs/{run_id}/events"

    seen: list[Event] = []
    async with client.stream("GET", path) as stream:
        async for event in events_of(stream):
            if event.event is None:
                continue
            seen.append(event)
            if event.event == "status" and event.data["status"] == "requires_action":
                waiting = event.data["required_action"]["calls"][0]
                approved = await api.post(
                    f"/v1/runs/{run_id}/approvals",
                    json={"call_id": waiting["call_id"], "digest": waiting["digest"], "decision": "approve"},
                    headers=headers(),
                )
                assert approved.status_code == 200

    statuses = [e.data["status"] for e in seen if e.event == "status"]
    # the stream stays open while the run waits, and ends with its terminal status
    # running twice after the wait: answered (back to running), then claimed by an executor (a new attempt)
    assert statuses == ["pending", "running", "requires_action", "running", "running", "succeeded"]
    assert [e.data["kind"] for e in seen if e.event == "step"] == ["llm", "tool", "llm"]


async def test_every_event_sent_validates_against_the_documented_event_schema(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    # a paused run: statuses with and without a required action, LLM and tool steps, keep-alives while it waits
    api = await api_factory([calls("add", "c1", a=2, b=3), answer("5")], sse_keepalive_s=0.05)
    client = await client_of(api)
    document = (await api.get("/docs/openapi.json")).json()
    operation = schemathesis.openapi.from_dict(document)["/v1/runs/{run_id}/events"]["GET"]
    body = {"goal": "add, with approval", "approval_required": ["add"]}
    run_id = (await api.post("/v1/runs", json=body, headers=headers(**ASYNC))).json()["id"]

    lines: list[str] = []
    async with client.stream("GET", f"/v1/runs/{run_id}/events") as stream:
        async for line in stream.aiter_lines():
            lines.append(line)
            if line.startswith(":") and any("requires_action" in seen for seen in lines):
                await approve_waiting_call(api, run_id)  # a keep-alive came while the run waited
    sent = httpx.Response(200, headers=stream.headers, content="\n".join(lines).encode(), request=stream.request)
    sent.elapsed = stream.elapsed

    assert {"event: status", "event: step", ": keep-alive"} <= set(lines)
    assert '"status":"succeeded"' in lines[-2]
    operation.validate_response(sent)  # schemathesis' SSE check: raises naming the event that does not fit


async def approve_waiting_call(api: ApiClient, run_id: str) -> None:
    """Approve the run's waiting call, if it still waits."""
    run = (await api.get(f"/v1/runs/{run_id}", headers=headers())).json()
    if run["status"] == "requires_action":
        waiting = run["required_action"]["calls"][0]
        answer = {"call_id": waiting["call_id"], "digest": waiting["digest"], "decision": "approve"}
        assert (await api.post(f"/v1/runs/{run_id}/approvals", json=answer, headers=headers())).status_code == 200
