"""POST /v1/chat and POST /v1/runs answered as streams (AgentKit's events, and the Vercel AI SDK's UI message
stream), read with httpx from a server on loopback; on in-memory state and on real PostgreSQL and Redis."""

import contextlib
import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
import schemathesis

from agentkit.application.errors import LLMUnavailable
from tests.http.test_run_events_api import FlakyEventLog, LogProvider
from tests.http_fixtures import ApiClient, ApiFactory, headers
from tests.sample_tools import add
from tests.sse_fixtures import Event, events_of, read_all, served
from tests.streaming_llm import StreamingLLM, broken_turn, call_turn, text_turn
from tests.ui_message_protocol import read_message

WAIT_S = 30.0  # generous: only a failure waits this long
ADD_PIECES = ['{"a": ', '2, "b"', ": 3}"]
TEXT_PART = {"type": "text", "text": "add 2 and 3"}


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


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


async def paced_events(response: httpx.Response, llm: StreamingLLM) -> list[Event]:
    """Every event of a stream to its end; each fragment lets the model write the next."""
    assert response.status_code == 200, await response.aread()
    assert response.headers["content-type"].startswith("text/event-stream")
    seen: list[Event] = []
    async for event in events_of(response):
        if event.event is None:
            continue
        seen.append(event)
        if event.event == "delta":
            llm.go()
    return seen


async def ui_chunks(response: httpx.Response, llm: StreamingLLM | None = None) -> list[Any]:
    """The `data:` of a UI message stream, decoded (`[DONE]` as it is); each fragment lets a paced model go on."""
    assert response.status_code == 200, await response.aread()
    chunks: list[Any] = []
    async for line in response.aiter_lines():
        if not line.startswith("data: "):
            assert line == "" or line.startswith(":"), line  # nothing but data, blank lines and comments
            continue
        data = line.removeprefix("data: ")
        chunks.append(data if data == "[DONE]" else json.loads(data))
        if llm is not None and data != "[DONE]" and chunks[-1]["type"] in ("text-delta", "tool-input-delta"):
            llm.go()
    return chunks


def ids_only_grow(events: list[Event]) -> bool:
    keys = [tuple(int(part) for part in (event.id or "").split("-")) for event in events]
    return all(earlier < later for earlier, later in itertools.pairwise(keys))


async def test_a_streamed_chat_turn_sends_fragments_that_join_to_the_stored_answer(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM([text_turn("The| sum| is| 5.")], paced=True)
    api = await api_factory(llm=llm)
    client = await client_of(api)

    async with client.stream("POST", "/v1/chat", json={"message": "2+3?", "stream": True}) as response:
        events = await paced_events(response, llm)
    run_id = response.headers["location"].removeprefix("/v1/runs/")
    stored = (await client.get(f"/v1/runs/{run_id}")).json()

    assert [(e.event, e.data.get("status")) for e in events] == [
        ("status", "pending"),
        ("status", "running"),
        *[("delta", None)] * 4,
        ("step", None),
        ("status", "succeeded"),
    ]
    fragments = [e.data for e in events if e.event == "delta"]
    assert [f["text"] for f in fragments] == ["The", " sum", " is", " 5."]
    assert {(f["step_no"], f["kind"]) for f in fragments} == {(1, "text")}
    assert "".join(f["text"] for f in fragments) == stored["answer"] == "The sum is 5."
    assert events[-2].data["text"] == stored["answer"]  # the step holds it all
    assert stored["session_id"].startswith("chat-")
    assert ids_only_grow(events)
    assert (llm.streams, llm.chats) == (1, 0)


async def test_a_streamed_run_sends_argument_fragments_that_join_to_the_calls_arguments(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM([call_turn("c1", "add", ADD_PIECES), text_turn("2 + 3| = 5")], paced=True)
    api = await api_factory(llm=llm, tools=[add])
    client = await client_of(api)

    accept = {"Accept": "text/event-stream"}
    async with client.stream("POST", "/v1/runs", json={"goal": "add 2 and 3"}, headers=accept) as response:
        events = await paced_events(response, llm)
    run_id = response.headers["location"].removeprefix("/v1/runs/")
    trace = (await client.get(f"/v1/runs/{run_id}/trace")).json()

    pieces = [e.data for e in events if e.event == "delta" and e.data["step_no"] == 1]
    assert [(p["kind"], p.get("index", 0), p.get("call_id"), p.get("name")) for p in pieces] == [
        ("tool_call", 0, "c1", "add"),
        ("tool_call", 0, None, None),
        ("tool_call", 0, None, None),
    ]
    assert json.loads("".join(p["text"] for p in pieces)) == trace["steps"][0]["tool_calls"][0]["arguments"]
    assert trace["steps"][0]["tool_calls"][0]["arguments"] == {"a": 2, "b": 3}
    assert "".join(e.data["text"] for e in events if e.event == "delta" and e.data["step_no"] == 3) == "2 + 3 = 5"
    assert [e.data for e in events if e.event == "step"] == trace["steps"]
    assert events[-1].data["status"] == "succeeded"


async def test_use_chat_gets_the_ui_message_stream_of_a_turn_with_a_tool_call(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM(
        [call_turn("c1", "add", ADD_PIECES), text_turn("The sum| is 5."), text_turn("Eight.")], paced=True
    )
    api = await api_factory(llm=llm, tools=[add])
    client = await client_of(api)
    first = {"id": "chat-1", "role": "user", "parts": [{"type": "text", "text": "add 2 and 3"}]}
    body = {"id": "chat-a1", "messages": [first], "trigger": "submit-message"}  # as DefaultChatTransport posts it

    async with client.stream("POST", "/v1/chat", json=body) as response:
        chunks = await ui_chunks(response, llm)
    message = read_message(chunks[:-1])

    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert [chunk if chunk == "[DONE]" else chunk["type"] for chunk in chunks] == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
    ]
    assert "".join(c["inputTextDelta"] for c in chunks[3:6]) == '{"a": 2, "b": 3}'
    assert message["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-add",
            "toolCallId": "c1",
            "state": "output-available",
            "input": {"a": 2, "b": 3},
            "output": "5.0",
        },
        {"type": "step-start"},
        {"type": "text", "text": "The sum is 5.", "state": "done"},
    ]
    assert (message["errors"], message["finish_reason"]) == ([], "stop")
    run = (await client.get(f"/v1/runs/{message['id']}")).json()  # the message's id is the run's
    assert (run["session_id"], run["goal"], run["answer"]) == ("chat-a1", "add 2 and 3", "The sum is 5.")
    assert message["metadata"] == {"run_id": run["id"], "session_id": "chat-a1", "agent": "default"}

    # the next turn posts the whole chat again: the session has the turns before it, sent once
    reply = {"id": message["id"], "role": "assistant", "parts": message["parts"]}
    follow_up = {"id": "chat-3", "role": "user", "parts": [{"type": "text", "text": "and 4+4?"}]}
    again = {"id": "chat-a1", "messages": [first, reply, follow_up], "trigger": "submit-message"}
    async with client.stream("POST", "/v1/chat", json=again) as response:
        second = read_message((await ui_chunks(response, llm))[:-1])
    assert second["parts"][-1]["text"] == "Eight."
    assert [m.content for m in llm.requests[-1] if m.role == "user"] == ["add 2 and 3", "and 4+4?"]


async def test_refusals_come_as_problems_before_any_stream(memory_api_factory: ApiFactory) -> None:
    api = await memory_api_factory(llm=StreamingLLM([text_turn("one"), text_turn("two")]), rate_limit_per_min=1)
    streamed = {"Accept": "text/event-stream"}
    blank = {"id": "c", "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": "  "}]}]}

    anonymous = await api.post("/v1/runs", json={"goal": "hi", "stream": True})
    not_a_flag = await api.post("/v1/runs", json={"goal": "hi", "stream": "yes"}, headers=headers())
    no_turn = await api.post("/v1/chat", json=blank, headers=headers())
    bad_format = await api.post("/v1/chat?format=xml", json={"message": "hi"}, headers=headers())
    accepted = await api.post("/v1/runs", json={"goal": "hi"}, headers=headers(**streamed))
    limited = await api.post("/v1/chat", json={"message": "again", "stream": True}, headers=headers())

    for refused, status, code in [
        (anonymous, 401, "unauthorized"),
        (not_a_flag, 422, "validation_error"),
        (no_turn, 422, "validation_error"),
        (bad_format, 422, "validation_error"),
        (limited, 429, "rate_limited"),
    ]:
        assert (refused.status_code, refused.json()["code"]) == (status, code)
        assert refused.headers["content-type"].startswith("application/problem+json")
    assert not_a_flag.json()["detail"] == "body.stream: Expected `bool`, got `str`"
    assert no_turn.json()["detail"] == "body.messages[0]: a user message needs a text part that is not blank"
    assert accepted.status_code == 200
    assert accepted.headers["content-type"].startswith("text/event-stream")
    assert "retry-after" in limited.headers


async def test_with_the_event_log_down_a_stream_is_a_503_and_the_run_goes_on(memory_api_factory: ApiFactory) -> None:
    log = FlakyEventLog()
    log.down = True
    api = await memory_api_factory(llm=StreamingLLM([text_turn("done")]), providers=[LogProvider(log)])

    refused = await api.post("/v1/runs", json={"goal": "hi", "stream": True}, headers=headers())
    named = re.search(r"run ([0-9a-f-]{36}) was accepted", refused.json()["detail"])
    assert named is not None, refused.json()
    run_id = named.group(1)
    run = (await api.get(f"/v1/runs/{run_id}?wait=10", headers=headers())).json()

    assert (refused.status_code, refused.json()["code"]) == (503, "store_unavailable")
    assert refused.headers["retry-after"] == "5"
    assert f"follow it at /v1/runs/{run_id}/events" in refused.json()["detail"]
    assert (run["status"], run["answer"]) == ("succeeded", "done")


async def test_a_replayed_streamed_request_streams_the_first_run_from_its_start(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM([text_turn("The| answer.")])
    api = await api_factory(llm=llm)
    client = await client_of(api)
    body, key = {"goal": "answer", "stream": True}, {"Idempotency-Key": "stream-once"}

    first = await read_all_post(client, "/v1/runs", body, key)
    async with client.stream("POST", "/v1/runs", json=body, headers=key) as response:
        assert response.headers["idempotent-replayed"] == "true"
        replayed = [event async for event in events_of(response) if event.event is not None]
    as_json = await client.post("/v1/runs", json={"goal": "answer"}, headers=key)  # `stream` is no other request

    whole = [(e.id, e.event, e.data) for e in first if e.event != "delta"]
    assert [(e.id, e.event, e.data) for e in replayed] == whole  # its fragments went once its step was stored
    assert replayed[-1].data["answer"] == "The answer."
    assert (as_json.status_code, as_json.json()["id"]) == (201, replayed[-1].data["id"])
    assert llm.streams == 1


async def read_all_post(client: httpx.AsyncClient, path: str, body: Any, extra: dict[str, str]) -> list[Event]:
    async with client.stream("POST", path, json=body, headers=extra) as response:
        assert response.status_code == 200, await response.aread()
        return [event async for event in events_of(response) if event.event is not None]


async def test_a_client_that_drops_mid_answer_resumes_on_the_events_with_no_fragment_lost_or_repeated(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM([text_turn("one| two| three| four")], paced=True)
    api = await api_factory(llm=llm)
    client = await client_of(api)

    before: list[Event] = []
    async with client.stream("POST", "/v1/runs", json={"goal": "count", "stream": True}) as response:
        async for event in events_of(response):
            if event.event is not None:
                before.append(event)
            if event.event == "delta":
                break  # the model waits after its first fragment; the client goes away
    path = response.headers["location"] + "/events"
    async with client.stream("GET", path, headers={"Last-Event-ID": before[-1].id or ""}) as resumed:
        llm.go()  # the model goes on while the client listens again
        after = await paced_events(resumed, llm)
    whole = await read_all(client, path)

    fragments = [e.data["text"] for e in before + after if e.event == "delta"]
    assert fragments == ["one", " two", " three", " four"]  # each once, in order
    assert after[-2].event == "step"
    assert after[-2].data["text"] == "".join(fragments) == after[-1].data["answer"]
    assert ids_only_grow(before + after)
    # read again from the start, the fragments are gone: the step has them
    assert [(e.id, e.event) for e in whole] == [(e.id, e.event) for e in before + after if e.event != "delta"]


async def test_a_client_that_comes_back_after_the_step_was_stored_gets_the_step_instead_of_the_fragments(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    llm = StreamingLLM([text_turn("one| two| three")], paced=True)
    api = await api_factory(llm=llm)
    client = await client_of(api)

    before: list[Event] = []
    async with client.stream("POST", "/v1/runs", json={"goal": "count", "stream": True}) as response:
        async for event in events_of(response):
            if event.event is not None:
                before.append(event)
            if event.event == "delta":
                break
    run_path = response.headers["location"]
    llm.free()
    whole = await read_all(client, f"{run_path}/events")  # to the end: the step is logged, its fragments gone
    after = await read_all(client, f"{run_path}/events", **{"Last-Event-ID": before[-1].id or ""})
    ended = (await client.get(run_path)).json()

    assert "delta" not in [e.event for e in whole]
    assert [e.event for e in after] == ["step", "status"]  # the fragments it missed were dropped with the step
    seen = "".join(e.data["text"] for e in before if e.event == "delta")
    assert after[0].data["text"].startswith(seen)
    assert after[0].data["text"] == ended["answer"] == "one two three"
    assert ids_only_grow(before + after)


@pytest.mark.parametrize(
    ("path", "body", "form"),
    [
        ("/v1/runs", {"goal": "add 2 and 3", "stream": True}, "agentkit"),
        ("/v1/runs?format=vercel", {"goal": "add 2 and 3"}, "vercel"),
        ("/v1/chat", {"message": "add 2 and 3", "stream": True}, "agentkit"),
        (
            "/v1/chat",
            {"id": "c1", "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]},
            "vercel",
        ),
    ],
)
async def test_every_streamed_event_validates_against_the_documented_schema(
    memory_api_factory: ApiFactory, client_of: ClientOf, path: str, body: dict[str, Any], form: str
) -> None:
    llm = StreamingLLM([call_turn("c1", "add", ADD_PIECES), text_turn("The sum| is 5.")], paced=True)
    api = await memory_api_factory(llm=llm, tools=[add])
    client = await client_of(api)
    document = (await api.get("/docs/openapi.json")).json()
    operation = schemathesis.openapi.from_dict(document)[path.split("?")[0]]["POST"]

    lines: list[str] = []
    async with client.stream("POST", path, json=body) as stream:
        async for line in stream.aiter_lines():
            lines.append(line)
            if line.startswith("event: delta") or '"type":"text-delta"' in line or '"type":"tool-input-delta"' in line:
                llm.go()
    sent = httpx.Response(200, headers=stream.headers, content="\n".join(lines).encode(), request=stream.request)
    sent.elapsed = stream.elapsed

    assert ("event: delta" in lines) == (form == "agentkit")
    assert (lines[-2] == "data: [DONE]") == (form == "vercel")
    operation.validate_response(sent)  # schemathesis' SSE check: raises naming the event that does not fit


async def test_a_provider_error_mid_stream_is_the_steps_error_and_the_stream_ends_with_the_failed_run(
    api_factory: ApiFactory, client_of: ClientOf
) -> None:
    broken = broken_turn("The sum| is", LLMUnavailable("the provider's stream broke off"))
    llm = StreamingLLM([broken, broken], paced=True)
    api = await api_factory(llm=llm)
    client = await client_of(api)

    async with client.stream("POST", "/v1/runs", json={"goal": "add 2 and 3", "stream": True}) as response:
        events = await paced_events(response, llm)
    run_id = events[0].data["id"]
    trace = (await client.get(f"/v1/runs/{run_id}/trace")).json()
    async with client.stream("POST", "/v1/runs?format=vercel", json={"goal": "again"}) as response:
        chunks = await ui_chunks(response, llm)

    assert [(e.event, e.data.get("status")) for e in events] == [
        ("status", "pending"),
        ("status", "running"),
        ("delta", None),
        ("delta", None),
        ("step", None),
        ("status", "failed"),
    ]
    assert "".join(e.data["text"] for e in events if e.event == "delta") == "The sum is"  # what came before the break
    step = events[-2].data
    assert (step["kind"], step["error_type"]) == ("llm", "LLMUnavailable")
    assert "the provider's stream broke off" in step["error"]
    assert step == trace["steps"][0]  # the step as stored
    assert events[-1].data["failure_reason"] == "the LLM call failed: the provider's stream broke off"
    assert ids_only_grow(events)
    # the UI message stream: the text the model had begun is dropped, the run's failure is the error
    message = read_message(chunks[:-1])
    assert [p for p in message["parts"] if p["type"] == "text"] == []
    assert message["finish_reason"] == "error"
    assert any("the provider's stream broke off" in error for error in message["errors"])
