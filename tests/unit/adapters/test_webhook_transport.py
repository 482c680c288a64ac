"""The webhook transport and its URL guard, through httpx's MockTransport: nothing leaves the process."""

from datetime import UTC, datetime

import httpx
import pytest
from standardwebhooks import Webhook

from agentkit.adapters.webhooks import FixedHostResolver, HttpWebhookTransport, WebhookURLGuard, signer
from agentkit.application.errors import InvalidCallbackURL
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.webhooks import WebhookDelivery
from tests.webhook_receiver import new_secret

SECRET = new_secret()
RESOLVER = FixedHostResolver({"hooks.test": ["127.0.0.1"], "private.test": ["10.1.2.3"], "v6.test": ["::1"]})


def delivery(url: str = "https://hooks.test/in") -> WebhookDelivery:
    at = datetime.now(UTC)
    return WebhookDelivery(
        id="msg_abc",
        run_id=RunId("r1"),
        owner=OwnerId("k"),
        event="run.succeeded",
        url=url,
        payload='{"type":"run.succeeded","data":{"id":"r1"}}',
        created_at=at,
        next_attempt_at=at,
    )


def transport_answering(status: int, seen: list[httpx.Request], **headers: str) -> HttpWebhookTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, headers=headers)

    guard = WebhookURLGuard(resolver=RESOLVER, allow_loopback=True)
    return HttpWebhookTransport(guard=guard, signer=signer(SECRET), timeout_s=5, transport=httpx.MockTransport(answer))


async def test_the_post_is_signed_per_standard_webhooks_and_sent_to_the_checked_address() -> None:
    seen: list[httpx.Request] = []

    outcome = await transport_answering(204, seen).post(delivery(), at=datetime.now(UTC))

    assert outcome.delivered
    [request] = seen
    assert request.method == "POST"
    assert request.url.host == "127.0.0.1"  # pinned: the address the guard checked, not the name again
    assert request.headers["host"] == "hooks.test"
    assert request.extensions["sni_hostname"] == "hooks.test"  # TLS still verifies the name
    assert request.headers["webhook-id"] == "msg_abc"
    payload = Webhook(SECRET).verify(request.content, dict(request.headers))
    assert payload == {"type": "run.succeeded", "data": {"id": "r1"}}


@pytest.mark.parametrize(
    ("status", "retryable"), [(500, True), (503, True), (429, True), (400, False), (404, False), (301, False)]
)
async def test_5xx_and_429_are_retried_other_answers_are_not(status: int, retryable: bool) -> None:
    outcome = await transport_answering(status, []).post(delivery(), at=datetime.now(UTC))

    assert not outcome.delivered
    assert outcome.status_code == status
    assert outcome.retryable is retryable


async def test_retry_after_is_read_from_a_busy_receiver() -> None:
    outcome = await transport_answering(429, [], **{"Retry-After": "7"}).post(delivery(), at=datetime.now(UTC))

    assert outcome.retry_after_s == 7.0


async def test_a_url_refused_at_send_time_is_not_contacted_and_not_retried() -> None:
    seen: list[httpx.Request] = []

    outcome = await transport_answering(200, seen).post(delivery("http://private.test/x"), at=datetime.now(UTC))

    assert seen == []
    assert not outcome.retryable
    assert "private address" in str(outcome.error)


async def test_a_host_that_does_not_resolve_at_send_time_is_retried() -> None:
    outcome = await transport_answering(200, []).post(delivery("http://gone.test/x"), at=datetime.now(UTC))

    assert outcome.retryable
    assert "cannot resolve 'gone.test'" in str(outcome.error)


async def test_loopback_is_refused_unless_allowed_and_private_addresses_always() -> None:
    strict = WebhookURLGuard(resolver=RESOLVER)
    loose = WebhookURLGuard(resolver=RESOLVER, allow_loopback=True)

    for url in ("http://hooks.test/", "http://127.0.0.1:8080/", "http://v6.test/", "http://localhost/"):
        with pytest.raises(InvalidCallbackURL):
            await strict.check(url)
    for url in ("http://hooks.test/", "http://127.0.0.1:8080/", "http://v6.test/"):
        await loose.check(url)
    with pytest.raises(InvalidCallbackURL, match="private address"):
        await loose.check("http://private.test/")


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        ("abc", "expected whsec_"),
        ("whsec_not base64!", "not base64"),
        ("whsec_" + "QUJD", "the key is 3 bytes"),
    ],
)
def test_a_bad_signing_secret_is_explained(secret: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        signer(secret)
