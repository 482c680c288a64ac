"""A2A through the a2a-sdk's own client, over loopback HTTP: every agent reachable by any A2A client.

Cards, blocking and streaming sends, get, list, cancel, the input-required round trip with an
approval, push notifications to a loopback receiver, auth, both protocol versions, and the errors.
Every task is a run: the tests read the same id back through /v1/runs.
"""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    JSON_RPC_ERROR_CODE_MAP,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from google.protobuf.json_format import MessageToDict, ParseDict

from agentkit.application.tools import Tool, tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from tests.a2a_fixtures import WAIT_S, a2a_client, collect
from tests.http_fixtures import KEY_B, ApiFactory, Gate, headers
from tests.streaming_llm import StreamingLLM, text_turn
from tests.webhook_receiver import new_secret, receiving


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=2))


def calls(name: str, call_id: str = "c1", **arguments: Any) -> LLMResponse:
    return LLMResponse(tool_calls=(ToolCall(id=ToolCallId(call_id), name=name, arguments=arguments),), usage=Usage())


def send(text: str, *, context_id: str = "", task_id: str = "", **configuration: Any) -> SendMessageRequest:
    message = new_text_message(text, context_id=context_id or None, task_id=task_id or None)
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(**configuration))


def data_message(data: Any, *, task_id: str, context_id: str) -> SendMessageRequest:
    part = Part()
    ParseDict(data, part.data)
    message = Message(message_id="m-answer", role=Role.ROLE_USER, parts=[part], task_id=task_id, context_id=context_id)
    return SendMessageRequest(message=message)


def text_of(task: Task) -> str:
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts)


def gate_tool(gate: Gate) -> Tool[..., Any]:
    @tool
    async def wait_for_gate() -> str:
        """Wait until the test opens the gate."""
        gate.entered.set()
        await gate.opened.wait()
        return "through"

    return wait_for_gate


def transfer_tool(done: list[int]) -> Tool[..., Any]:
    @tool(requires_approval=True)
    def transfer(amount: int) -> str:
        """Send money.

        Args:
            amount: Euros to send.
        """
        done.append(amount)
        return f"sent {amount} EUR"

    return transfer


async def test_the_default_agents_card_names_its_endpoint_both_versions_its_skills_and_the_key(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([])
    async with a2a_client(api) as a2a:
        raw = (await a2a.http.get(a2a.url + "/.well-known/agent-card.json", headers={"X-API-Key": ""})).json()
        named = (await a2a.http.get(a2a.url + "/a2a/default/.well-known/agent-card.json")).json()
        unknown = await a2a.http.get(a2a.url + "/a2a/nobody/.well-known/agent-card.json")

    card = a2a.card
    assert card.name == "default"
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        (a2a.url + "/a2a/default", "JSONRPC", "1.0"),
        (a2a.url + "/a2a/default", "JSONRPC", "0.3"),
    ]
    assert card.capabilities.streaming
    assert [skill.name for skill in card.skills] == ["default", "add", "lookup"]
    assert set(card.skills[0].tags) >= {"add", "lookup"}
    assert card.skills[1].description == "Add two numbers."
    scheme = card.security_schemes["ApiKey"].api_key_security_scheme
    assert (scheme.location, scheme.name) == ("header", "X-API-Key")
    assert "ApiKey" in card.security_requirements[0].schemes
    # the same card for v0.3 readers too (url, protocolVersion, securitySchemes' `in`), with no key needed
    assert raw["url"] == a2a.url + "/a2a/default"
    assert raw["securitySchemes"]["ApiKey"]["in"] == "header"
    assert named == raw
    assert unknown.status_code == 404


async def test_each_agent_profile_has_its_card_and_endpoint_and_its_tasks_are_its_runs(
    api_factory: ApiFactory, tmp_path: Path
) -> None:
    agents = tmp_path / "agents.toml"
    agents.write_text(
        '[agents.support]\ndescription = "Answers weather questions."\ninstructions = "Be brief."\n'
        'tools = ["lookup"]\n',
        encoding="utf-8",
    )
    api = await api_factory([answer("sunny")], agents_file=str(agents))
    async with a2a_client(api, agent_path="/a2a/support") as a2a:
        [event] = await collect(a2a.client.send_message(send("weather in Paris?")))
        default_card = (await a2a.http.get(a2a.url + "/.well-known/agent-card.json")).json()

    card = a2a.card
    assert (card.name, card.description) == ("support", "Answers weather questions.")
    assert card.supported_interfaces[0].url == a2a.url + "/a2a/support"
    assert [(skill.name, skill.description) for skill in card.skills] == [
        ("support", "Answers weather questions."),
        ("lookup", "Look up the weather of a city."),
    ]
    assert default_card["name"] == "default"
    run = (await api.get(f"/v1/runs/{event.task.id}", headers=headers())).json()
    assert (run["agent"], run["answer"]) == ("support", "sunny")


async def test_a_blocking_send_answers_the_completed_task_which_is_the_run_of_the_same_id(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([calls("add", a=2, b=3), answer("2 + 3 = 5")])
    async with a2a_client(api) as a2a:
        [event] = await collect(a2a.client.send_message(send("what is 2 + 3?")))

        task = event.task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert text_of(task) == "2 + 3 = 5"
        assert [artifact.artifact_id for artifact in task.artifacts] == ["answer"]
        assert task.history[0].parts[0].text == "what is 2 + 3?"
        run = (await api.get(f"/v1/runs/{task.id}", headers=headers())).json()
        assert (run["status"], run["answer"], run["session_id"]) == ("succeeded", "2 + 3 = 5", task.context_id)
        trace = (await api.get(f"/v1/runs/{task.id}/trace", headers=headers())).json()
        assert [step["kind"] for step in trace["steps"]] == ["llm", "tool", "llm"]
        got = await a2a.client.get_task(GetTaskRequest(id=task.id))
        assert (got.status.state, text_of(got)) == (TaskState.TASK_STATE_COMPLETED, "2 + 3 = 5")


async def test_a_message_sent_again_is_the_same_task_and_its_id_with_another_message_is_refused(
    api_factory: ApiFactory,
) -> None:
    llm = StreamingLLM([text_turn("once")])
    api = await api_factory(llm=llm)
    async with a2a_client(api) as a2a:
        request = send("do it once")
        [first] = await collect(a2a.client.send_message(request))
        [again] = await collect(a2a.client.send_message(request))  # a retry after a lost answer
        other = send("something else")
        other.message.message_id = request.message.message_id
        with pytest.raises(InvalidParamsError, match="messageId"):
            await collect(a2a.client.send_message(other))

    assert again.task.id == first.task.id
    assert text_of(again.task) == "once"
    assert llm.streams + llm.chats == 1
    assert len((await api.get("/v1/runs", headers=headers())).json()["runs"]) == 1


async def test_a_message_in_the_same_context_continues_the_session_and_list_finds_the_contexts_tasks(
    api_factory: ApiFactory,
) -> None:
    llm = StreamingLLM([text_turn("Hi Ada"), text_turn("You are Ada")])
    api = await api_factory(llm=llm)
    async with a2a_client(api) as a2a:
        [first] = await collect(a2a.client.send_message(send("I am Ada")))
        context = first.task.context_id
        [second] = await collect(a2a.client.send_message(send("who am I?", context_id=context)))
        listed = await a2a.client.list_tasks(ListTasksRequest(context_id=context))
        completed = await a2a.client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED, page_size=1))

    assert second.task.context_id == context
    assert text_of(second.task) == "You are Ada"
    assert "I am Ada" in [m.content for m in llm.requests[1]]  # the session's history reached the model
    assert [task.id for task in listed.tasks] == [second.task.id, first.task.id]
    assert [task.id for task in completed.tasks] == [second.task.id]
    assert completed.next_page_token


async def test_a_streamed_send_gives_the_task_its_status_changes_the_answers_fragments_and_the_answer(
    api_factory: ApiFactory,
) -> None:
    llm = StreamingLLM([text_turn("The |answer |is 42")], paced=True)
    api = await api_factory(llm=llm)
    events = []
    async with a2a_client(api, streaming=True) as a2a, asyncio.timeout(WAIT_S):
        async for event in a2a.client.send_message(send("the answer?")):
            events.append(event)
            if event.HasField("artifact_update") and event.artifact_update.append:
                llm.go()  # the next fragment is written only once this one arrived

    first, *rest = events
    assert first.task.status.state == TaskState.TASK_STATE_SUBMITTED
    states = [e.status_update.status.state for e in rest if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert TaskState.TASK_STATE_WORKING in states
    updates = [e.artifact_update for e in rest if e.HasField("artifact_update")]
    fragments = [u.artifact.parts[0].text for u in updates if u.append]
    assert "".join(fragments) == "The answer is 42"  # the tokens as the model wrote them
    final = updates[-1]
    assert (final.append, final.last_chunk, final.artifact.parts[0].text) == (False, True, "The answer is 42")
    assert all(u.task_id == first.task.id for u in updates)


async def test_input_required_carries_the_pending_call_and_the_next_message_approves_it(
    api_factory: ApiFactory,
) -> None:
    done: list[int] = []
    api = await api_factory(
        [calls("transfer", amount=5), answer("sent")], tools=[transfer_tool(done)], response_timeout_s=10
    )
    async with a2a_client(api) as a2a:
        [paused] = await collect(a2a.client.send_message(send("send Bob 5 EUR")))
        task = paused.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        text, data = task.status.message.parts
        assert "answers" in text.text
        [pending] = MessageToDict(data.data)["pending_calls"]
        assert (pending["name"], pending["arguments"], pending["kind"]) == ("transfer", {"amount": 5}, "approval")
        assert done == []

        wrong = data_message(
            {"answers": [{"call_id": pending["call_id"], "decision": "approve", "digest": "0" * 64}]},
            task_id=task.id,
            context_id=task.context_id,
        )
        with pytest.raises(Exception, match="digest"):
            await collect(a2a.client.send_message(wrong))
        approval = data_message(
            {"answers": [{"call_id": pending["call_id"], "decision": "approve", "digest": pending["digest"]}]},
            task_id=task.id,
            context_id=task.context_id,
        )
        [resumed] = await collect(a2a.client.send_message(approval))
        with pytest.raises(UnsupportedOperationError, match="succeeded"):
            await collect(a2a.client.send_message(approval))  # a completed task takes no message

    assert resumed.task.id == task.id
    assert resumed.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(resumed.task) == "sent"
    assert done == [5]


async def test_a_streamed_answer_to_input_required_streams_from_the_answer_on(api_factory: ApiFactory) -> None:
    done: list[int] = []
    api = await api_factory([calls("transfer", amount=7), answer("sent 7")], tools=[transfer_tool(done)])
    async with a2a_client(api, streaming=True) as a2a:
        first = await asyncio.wait_for(collect(a2a.client.send_message(send("send 7"))), WAIT_S)
        paused = first[-1].status_update
        assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        [pending] = MessageToDict(paused.status.message.parts[1].data)["pending_calls"]
        rejection = data_message(
            {"answers": [{"call_id": pending["call_id"], "decision": "reject", "digest": pending["digest"]}]},
            task_id=paused.task_id,
            context_id=paused.context_id,
        )
        events = await asyncio.wait_for(collect(a2a.client.send_message(rejection)), WAIT_S)

    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert TaskState.TASK_STATE_INPUT_REQUIRED not in states  # the pause answered is not sent again
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert done == []  # rejected: the model read the refusal and answered


async def test_cancel_ends_a_working_task_canceled_and_a_completed_one_is_not_cancelable(
    api_factory: ApiFactory,
) -> None:
    gate = Gate()
    api = await api_factory(
        [calls("wait_for_gate"), calls("add", "c2", a=1, b=1), answer("never")], tools=[gate_tool(gate)]
    )
    async with a2a_client(api) as a2a:
        [started] = await collect(a2a.client.send_message(send("wait", return_immediately=True)))
        task_id = started.task.id
        await asyncio.wait_for(gate.entered.wait(), WAIT_S)
        cancelling = asyncio.create_task(a2a.client.cancel_task(CancelTaskRequest(id=task_id)))
        async with asyncio.timeout(WAIT_S):
            while True:  # the cancel request stored: the run stops at its next step, once the tool returns
                if (await api.get(f"/v1/runs/{task_id}", headers=headers())).json()["cancel_requested"]:
                    break
                await asyncio.sleep(0.02)
        gate.opened.set()
        cancelled = await cancelling
        with pytest.raises(TaskNotCancelableError):
            await a2a.client.cancel_task(CancelTaskRequest(id=task_id, metadata=None))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert (await api.get(f"/v1/runs/{task_id}", headers=headers())).json()["status"] == "cancelled"


async def test_subscribe_follows_a_working_task_to_its_end(api_factory: ApiFactory) -> None:
    gate = Gate()
    api = await api_factory([calls("wait_for_gate"), answer("done")], tools=[gate_tool(gate)])
    async with a2a_client(api, streaming=True) as a2a:
        [started] = await collect(a2a.blocking().send_message(send("wait", return_immediately=True)))
        await asyncio.wait_for(gate.entered.wait(), WAIT_S)
        events = []
        async with asyncio.timeout(WAIT_S):
            async for event in a2a.client.subscribe(SubscribeToTaskRequest(id=started.task.id)):
                events.append(event)
                gate.opened.set()  # subscribed: the run may go on
        with pytest.raises(UnsupportedOperationError):
            await collect(a2a.client.subscribe(SubscribeToTaskRequest(id=started.task.id)))

    assert events[0].task.id == started.task.id
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert events[-2].artifact_update.artifact.parts[0].text == "done"


async def test_a_push_notification_config_becomes_the_runs_signed_webhook(api_factory: ApiFactory) -> None:
    secret = new_secret()
    async with receiving(secret) as receiver:
        api = await api_factory(
            [answer("done")], webhook_secret=secret, webhook_allow_loopback=True, webhook_poll_s=0.05
        )
        async with a2a_client(api) as a2a:
            request = send("g")
            request.configuration.task_push_notification_config.CopyFrom(
                TaskPushNotificationConfig(url=receiver.url, token="t")
            )
            [event] = await collect(a2a.client.send_message(request))
            [delivery] = await receiver.wait_for(1)
            configs = await a2a.client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=event.task.id)
            )
            with pytest.raises(UnsupportedOperationError):
                await a2a.client.create_task_push_notification_config(
                    TaskPushNotificationConfig(task_id=event.task.id, url=receiver.url)
                )

    assert a2a.card.capabilities.push_notifications
    assert delivery.verified  # signed per Standard Webhooks with the WEBHOOK_SECRET
    assert delivery.payload["type"] == "run.succeeded"
    assert delivery.payload["data"]["id"] == event.task.id
    assert [(c.id, c.url) for c in configs.configs] == [("webhook", receiver.url)]


async def test_without_the_key_every_call_is_refused_and_another_keys_task_does_not_exist(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([answer("mine")])
    async with a2a_client(api, key=None) as anonymous:
        with pytest.raises(A2AClientError, match="401"):
            await collect(anonymous.client.send_message(send("hello")))
    async with a2a_client(api) as owner:
        [event] = await collect(owner.client.send_message(send("hello")))
    async with a2a_client(api, key=KEY_B) as other:
        with pytest.raises(TaskNotFoundError):
            await other.client.get_task(GetTaskRequest(id=event.task.id))
        assert list((await other.client.list_tasks(ListTasksRequest())).tasks) == []
    assert (await api.get("/v1/runs", headers=headers())).json()["runs"][0]["id"] == event.task.id


async def test_a_v0_3_client_sends_gets_and_lists_on_the_same_endpoint(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("old and new")])
    async with a2a_client(api, version="0.3") as a2a:
        [event] = await collect(a2a.client.send_message(send("hello from 0.3")))
        got = await a2a.client.get_task(GetTaskRequest(id=event.task.id))
        with pytest.raises(TaskNotFoundError):
            await a2a.client.get_task(GetTaskRequest(id="00000000-0000-0000-0000-000000000000"))

    assert event.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(event.task) == "old and new"
    assert got.id == event.task.id
    assert (await api.get(f"/v1/runs/{got.id}", headers=headers())).json()["status"] == "succeeded"


async def test_a_v0_3_client_streams_a_task_to_its_answer(api_factory: ApiFactory) -> None:
    api = await api_factory(llm=StreamingLLM([text_turn("streamed| in| 0.3")]))
    async with a2a_client(api, version="0.3", streaming=True) as a2a:
        events = await asyncio.wait_for(collect(a2a.client.send_message(send("hello"))), WAIT_S)

    assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    final = [e.artifact_update for e in events if e.HasField("artifact_update")][-1]
    assert final.artifact.parts[0].text == "streamed in 0.3"


async def test_a_bad_context_id_or_an_oversized_body_is_refused_before_anything_is_stored(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([answer("x")], max_body_bytes=4096)
    async with a2a_client(api) as a2a:
        with pytest.raises(InvalidParamsError, match="contextId"):
            await collect(a2a.client.send_message(send("hi", context_id="no spaces/or slashes")))
        with pytest.raises(InvalidParamsError, match="goal"):
            await collect(a2a.client.send_message(send("   ")))
        pushed = send("tell me later")
        pushed.configuration.task_push_notification_config.url = "http://127.0.0.1:9/hooks"
        with pytest.raises(PushNotificationNotSupportedError):  # no WEBHOOK_SECRET: nothing would sign them
            await collect(a2a.client.send_message(pushed))
        huge = await a2a.http.post(a2a.url + "/a2a/default", content=b"x" * 5000, headers={"A2A-Version": "1.0"})

    assert huge.status_code == 413
    assert huge.headers["content-type"].startswith("application/problem+json")
    assert (await api.get("/v1/runs", headers=headers())).json()["runs"] == []


async def test_errors_are_json_rpc_errors_never_a_500(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("x")], a2a_v03_compat=False, rate_limit_per_min=1)
    async with a2a_client(api) as a2a:
        post = a2a.http.post
        url = a2a.url + "/a2a/default"
        v1 = {"A2A-Version": "1.0"}
        not_json = await post(url, content=b"{not json", headers=v1)
        not_rpc = await post(url, json={"hello": "world"}, headers=v1)
        unknown = await post(url, json={"jsonrpc": "2.0", "id": 1, "method": "Nope", "params": {}}, headers=v1)
        bad_params = await post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": 5, "x": []}}, headers=v1
        )
        future = await post(
            url,
            json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "x"}},
            headers={"A2A-Version": "2.0"},
        )
        legacy = await post(
            url,
            json={"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": "x"}},
            headers={"A2A-Version": ""},
        )
        no_version = await post(  # an empty header is none (the client's own default says 1.0)
            url,
            json={"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "x"}},
            headers={"A2A-Version": ""},
        )
        get = await a2a.http.get(url)
        with pytest.raises(TaskNotFoundError):
            await a2a.client.get_task(GetTaskRequest(id="not-a-task"))
        with pytest.raises(TaskNotFoundError):
            await collect(a2a.client.send_message(send("more", task_id="00000000-0000-0000-0000-000000000000")))
        await collect(a2a.client.send_message(send("one")))
        with pytest.raises(InternalError, match="rate_limited"):  # JSON-RPC has no 429: the code names it
            await collect(a2a.client.send_message(send("two")))

    responses = [not_json, not_rpc, unknown, bad_params, future, legacy, no_version]
    assert {r.status_code for r in responses} == {200}
    codes = [r.json()["error"]["code"] for r in responses]
    assert codes[:4] == [-32700, -32600, -32601, -32602]
    assert codes[4] == codes[6] == JSON_RPC_ERROR_CODE_MAP[VersionNotSupportedError] == -32009  # no header: v0.3
    assert codes[5] == -32601  # v0.3's names are off with A2A_V03_COMPAT=false
    assert get.status_code == 405
