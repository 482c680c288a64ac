"""Webhooks through HTTP: a run's events POSTed, signed, to a receiver on loopback; retries; the SSRF guard.

Every receiver listens on 127.0.0.1 (WEBHOOK_ALLOW_LOOPBACK is on where a test sends). Addresses that
must be refused are never contacted, nor even written into a URL: the test's resolver maps a test
host name to them, and the guard refuses the name.
"""

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from dishka import Provider, Scope

from agentkit.adapters.webhooks import FixedHostResolver, HostResolver
from agentkit.application.tools import Tool, tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from tests.http_fixtures import KEY_B, ApiClient, ApiFactory, Gate, headers
from tests.webhook_receiver import WAIT_S, closed_port, new_secret, receiving

SECRET = new_secret()
FAST = {
    "webhook_secret": SECRET,
    "webhook_allow_loopback": True,
    "webhook_retry_first_s": 0.05,
    "webhook_retry_max_s": 0.2,
    "webhook_poll_s": 0.05,
}


@pytest.fixture(params=["memory", "real"])
def api_factory(request: pytest.FixtureRequest) -> ApiFactory:
    """Each test twice: on in-memory state, and on the test database and Redis."""
    factory: ApiFactory = request.getfixturevalue(f"{request.param}_api_factory")
    return factory


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=2))


def calls(name: str) -> LLMResponse:
    return LLMResponse(tool_calls=(ToolCall(id=ToolCallId("c1"), name=name, arguments={}),), usage=Usage())


def resolving(table: Mapping[str, Sequence[str]]) -> Provider:
    """The container's resolver replaced by a table (the mapping is read at each lookup: tests may change it)."""
    provider = Provider()
    provider.provide(lambda: FixedHostResolver(table), provides=HostResolver, scope=Scope.APP)
    return provider


async def deliveries_once(api: ApiClient, run_id: str, done: int, key: str = "") -> list[dict[str, Any]]:
    """The run's deliveries once `done` of them are delivered or failed (waits for the sender's records)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            response = await api.get(f"/v1/runs/{run_id}/webhooks", headers=headers(key) if key else headers())
            assert response.status_code == 200
            found: list[dict[str, Any]] = response.json()["deliveries"]
            if sum(d["status"] != "pending" for d in found) >= done:
                return found
            await asyncio.sleep(0.02)


async def test_a_signed_webhook_whose_first_delivery_fails_is_retried_and_every_attempt_is_on_the_run(
    api_factory: ApiFactory,
) -> None:
    async with receiving(SECRET, statuses=[500]) as receiver:
        api = await api_factory([answer("done")], **FAST)

        response = await api.post("/v1/runs", json={"goal": "g", "callback_url": receiver.url}, headers=headers())

        assert response.status_code == 201
        run = response.json()
        first, second = await receiver.wait_for(2)
        assert first.verified  # standardwebhooks.Webhook(secret).verify passed
        assert second.verified
        assert (first.answered, second.answered) == (500, 200)
        assert first.headers["webhook-id"] == second.headers["webhook-id"]  # a receiver drops the repeat
        assert first.body == second.body
        assert second.payload["type"] == "run.succeeded"
        assert second.payload["data"]["id"] == run["id"]
        assert (second.payload["data"]["status"], second.payload["data"]["answer"]) == ("succeeded", "done")
        assert second.payload["data"]["callback_url"] == receiver.url
        assert second.headers["content-type"] == "application/json"
        [delivery] = await deliveries_once(api, run["id"], done=1)
        assert delivery["id"] == first.headers["webhook-id"]
        assert (delivery["event"], delivery["url"], delivery["status"]) == ("run.succeeded", receiver.url, "delivered")
        assert [(a["attempt"], a["status_code"]) for a in delivery["attempts"]] == [(1, 500), (2, 200)]
        assert "500" in delivery["attempts"][0]["error"]
        assert delivery["attempts"][1]["error"] is None
        assert all(a["duration_ms"] >= 0 for a in delivery["attempts"])
        assert delivery["next_attempt_at"] is None
        assert len(receiver.received) == 2


async def test_a_receiver_that_stays_down_ends_the_delivery_failed_and_the_run_is_unaffected(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([answer("done")], **FAST, webhook_max_attempts=3)
    url = f"http://127.0.0.1:{closed_port()}/hooks"

    response = await api.post("/v1/runs", json={"goal": "g", "callback_url": url}, headers=headers())

    assert response.status_code == 201
    run = response.json()
    assert run["status"] == "succeeded"
    [delivery] = await deliveries_once(api, run["id"], done=1)
    assert delivery["status"] == "failed"
    assert [a["status_code"] for a in delivery["attempts"]] == [None, None, None]
    assert delivery["failure_reason"].startswith("gave up after 3 attempts; the last: the request failed")
    assert (await api.get(f"/v1/runs/{run['id']}", headers=headers())).json()["status"] == "succeeded"


async def test_a_client_error_from_the_receiver_is_not_retried(api_factory: ApiFactory) -> None:
    async with receiving(SECRET, statuses=[410]) as receiver:
        api = await api_factory([answer("done")], **FAST)
        run = (await api.post("/v1/runs", json={"goal": "g", "callback_url": receiver.url}, headers=headers())).json()

        [delivery] = await deliveries_once(api, run["id"], done=1)

        assert delivery["status"] == "failed"
        assert [a["status_code"] for a in delivery["attempts"]] == [410]
        assert delivery["failure_reason"] == "the receiver answered 410 Gone"
        assert len(receiver.received) == 1


async def test_the_servers_default_callback_receives_runs_that_name_none(api_factory: ApiFactory) -> None:
    async with receiving(SECRET) as receiver:
        api = await api_factory([answer("done")], **FAST, webhook_url=receiver.url)

        run = (await api.post("/v1/runs", json={"goal": "g"}, headers=headers())).json()

        [got] = await receiver.wait_for(1)
        assert got.verified
        assert got.payload["data"]["id"] == run["id"]
        assert got.payload["data"]["callback_url"] is None


async def test_a_host_name_is_resolved_checked_and_the_connection_pinned_to_the_checked_address(
    api_factory: ApiFactory,
) -> None:
    async with receiving(SECRET) as receiver:
        api = await api_factory([answer("done")], **FAST, providers=[resolving({"hooks.test": ["127.0.0.1"]})])
        url = receiver.url_for("hooks.test")

        run = (await api.post("/v1/runs", json={"goal": "g", "callback_url": url}, headers=headers())).json()

        [got] = await receiver.wait_for(1)
        assert got.verified
        assert got.headers["host"] == f"hooks.test:{receiver.port}"
        [delivery] = await deliveries_once(api, run["id"], done=1)
        assert delivery["url"] == url


async def test_a_name_that_resolves_to_a_refused_address_by_send_time_is_not_contacted(
    api_factory: ApiFactory,
) -> None:
    gate = Gate()

    @tool
    async def wait_for_gate() -> str:
        """Wait until the test opens the gate."""
        gate.entered.set()
        await gate.opened.wait()
        return "through"

    table = {"hooks.test": ["127.0.0.1"]}
    async with receiving(SECRET) as receiver:
        tools: list[Tool[..., Any]] = [wait_for_gate]
        api = await api_factory(
            [calls("wait_for_gate"), answer("done")], **FAST, tools=tools, providers=[resolving(table)]
        )
        body = {"goal": "g", "callback_url": receiver.url_for("hooks.test")}
        accepted = await api.post("/v1/runs", json=body, headers=headers(Prefer="respond-async"))
        assert accepted.status_code == 202
        await asyncio.wait_for(gate.entered.wait(), WAIT_S)
        table["hooks.test"] = ["10.0.0.1"]  # the name now points into a private range (never contacted)
        gate.opened.set()

        [delivery] = await deliveries_once(api, accepted.json()["id"], done=1)

        assert delivery["status"] == "failed"
        assert len(delivery["attempts"]) == 1
        assert "resolves to 10.0.0.1, which is a private address" in delivery["failure_reason"]
        assert receiver.received == []


async def test_another_key_does_not_see_a_runs_webhooks(api_factory: ApiFactory) -> None:
    async with receiving(SECRET) as receiver:
        api = await api_factory([answer("done")], **FAST)
        run = (await api.post("/v1/runs", json={"goal": "g", "callback_url": receiver.url}, headers=headers())).json()

        response = await api.get(f"/v1/runs/{run['id']}/webhooks", headers=headers(KEY_B))

        assert response.status_code == 404
        assert response.json()["code"] == "run_not_found"
        missing = await api.get("/v1/runs/00000000-0000-0000-0000-000000000000/webhooks", headers=headers())
        assert missing.status_code == 404


REFUSED = {
    "internal.test": ["10.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "mixed.test": ["127.0.0.1", "10.0.0.1"],
}


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://hooks.test/x", "body.callback_url: Expected `str` matching regex"),
        ("hooks.test/x", "body.callback_url: Expected `str` matching regex"),
        ("http://internal.test/hooks", "internal.test resolves to 10.0.0.1, which is a private address"),
        ("http://metadata.test/hooks", "resolves to 169.254.169.254, which is a cloud metadata address"),
        ("http://mixed.test/hooks", "resolves to 10.0.0.1, which is a private address"),
        ("http://user:pw@hooks.test/x", "may not hold credentials"),
        ("http://nowhere.test/x", "cannot resolve 'nowhere.test'"),
        ("http://0x7f000001/x", "non-standard numeric address"),
        ("http://" + "a" * 2040 + ".test/", "length <= 2048"),
    ],
)
async def test_a_callback_url_that_is_not_http_or_names_a_refused_address_is_a_422(
    memory_api_factory: ApiFactory, url: str, says: str
) -> None:
    api = await memory_api_factory([answer("done")], **FAST, providers=[resolving(REFUSED)])

    response = await api.post("/v1/runs", json={"goal": "g", "callback_url": url}, headers=headers())

    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] in ("invalid_callback_url", "validation_error")
    assert says in problem["detail"]
    listed = (await api.get("/v1/runs", headers=headers())).json()
    assert listed["runs"] == []  # nothing stored


async def test_loopback_callbacks_are_refused_unless_the_setting_allows_them(memory_api_factory: ApiFactory) -> None:
    settings = {**FAST, "webhook_allow_loopback": False}
    api = await memory_api_factory([answer("done")], **settings, providers=[resolving({"hooks.test": ["127.0.0.1"]})])

    for url in ("http://127.0.0.1:9/hooks", "http://hooks.test/hooks", "http://localhost/hooks", "http://[::1]/h"):
        response = await api.post("/v1/runs", json={"goal": "g", "callback_url": url}, headers=headers())

        assert response.status_code == 422, url
        assert response.json()["code"] == "invalid_callback_url"


async def test_without_a_signing_secret_a_callback_is_refused_and_the_document_says_so(
    memory_api_factory: ApiFactory,
) -> None:
    api = await memory_api_factory([answer("done")], webhook_allow_loopback=True)

    response = await api.post(
        "/v1/runs", json={"goal": "g", "callback_url": "http://127.0.0.1:9/hooks"}, headers=headers()
    )
    document = (await api.get("/docs/openapi.json")).json()

    assert response.status_code == 422
    assert response.json()["detail"] == "body.callback_url: Expected `null`, got `str`"
    field = document["components"]["schemas"]["RunCreate"]["properties"]["callback_url"]
    assert "WEBHOOK_SECRET" in field["description"]
    assert field["type"] == "null"


async def test_the_openapi_document_describes_callback_url_and_the_webhooks_route(
    memory_api_factory: ApiFactory,
) -> None:
    api = await memory_api_factory(webhook_secret=SECRET)

    document = (await api.get("/docs/openapi.json")).json()

    create = document["components"]["schemas"]["RunCreate"]["properties"]["callback_url"]
    assert "Standard Webhooks" in str(create)
    route = document["paths"]["/v1/runs/{run_id}/webhooks"]["get"]
    assert "webhook-signature" in route["description"]
    assert "404" in route["responses"]


async def test_a_run_that_waits_for_an_approval_calls_back_and_is_resumed_from_what_the_webhook_said(
    api_factory: ApiFactory,
) -> None:
    add_call = LLMResponse(
        tool_calls=(ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3}),), usage=Usage()
    )
    async with receiving(SECRET) as receiver:
        api = await api_factory([add_call, answer("5")], **FAST)
        body = {"goal": "2+3", "callback_url": receiver.url, "approval_required": ["add"]}
        run = (await api.post("/v1/runs", json=body, headers=headers(Prefer="respond-async"))).json()

        [paused] = await receiver.wait_for(1)
        assert paused.verified
        assert paused.payload["type"] == "run.requires_action"
        [call] = paused.payload["data"]["required_action"]["calls"]
        approval = {"call_id": call["call_id"], "digest": call["digest"], "decision": "approve"}
        answered = await api.post(f"/v1/runs/{run['id']}/approvals", json=approval, headers=headers())
        assert answered.status_code < 300, answered.text
        _, ended = await receiver.wait_for(2)

        assert ended.verified
        assert ended.payload["type"] == "run.succeeded"
        assert ended.payload["data"]["answer"] == "5"
        assert paused.headers["webhook-id"] != ended.headers["webhook-id"]
        deliveries = await deliveries_once(api, run["id"], done=2)
        assert [(d["event"], d["status"]) for d in deliveries] == [
            ("run.requires_action", "delivered"),
            ("run.succeeded", "delivered"),
        ]


async def test_a_receiver_that_does_not_answer_never_holds_a_run_up_and_times_out(api_factory: ApiFactory) -> None:
    async with receiving(SECRET) as receiver:
        receiver.hold = asyncio.Event()  # the receiver reads each request and never answers
        api = await api_factory([answer("one"), answer("two")], **FAST, webhook_timeout_s=0.2, webhook_max_attempts=2)

        runs = [
            await api.post("/v1/runs", json={"goal": goal, "callback_url": receiver.url}, headers=headers())
            for goal in ("first", "second")
        ]

        assert [(r.status_code, r.json()["status"]) for r in runs] == [(201, "succeeded"), (201, "succeeded")]
        [delivery] = await deliveries_once(api, runs[0].json()["id"], done=1)
        assert delivery["status"] == "failed"
        assert [a["error"] for a in delivery["attempts"]] == ["no answer within 0.2 s (WEBHOOK_TIMEOUT_S)"] * 2
        receiver.hold.set()
