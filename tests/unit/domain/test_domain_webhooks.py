"""Webhook deliveries: what one attempt does to a delivery, and the backoff between attempts."""

from datetime import UTC, datetime, timedelta

import pytest

from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.webhooks import (
    AttemptOutcome,
    DeliveryStatus,
    RetryPolicy,
    WebhookDelivery,
    record_attempt,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)
POLICY = RetryPolicy(max_attempts=3, first_delay_s=2.0, max_delay_s=5.0)


def delivery() -> WebhookDelivery:
    return WebhookDelivery(
        id="msg_1",
        run_id=RunId("r1"),
        owner=OwnerId("k"),
        event="run.succeeded",
        url="https://hooks.example/x",
        payload="{}",
        created_at=T0,
        next_attempt_at=T0,
    )


def test_a_2xx_answer_delivers_it() -> None:
    done = record_attempt(delivery(), AttemptOutcome(duration_ms=20, status_code=204), at=T0, policy=POLICY, jitter=0)

    assert done.status is DeliveryStatus.DELIVERED
    assert done.finished_at == T0 + timedelta(milliseconds=20)
    assert [(a.number, a.status_code, a.error) for a in done.attempts] == [(1, 204, None)]


def test_a_retryable_failure_is_due_again_after_the_backoff_and_the_last_one_fails_it() -> None:
    failing = AttemptOutcome(duration_ms=0, status_code=503, error="the receiver answered 503", retryable=True)

    once = record_attempt(delivery(), failing, at=T0, policy=POLICY, jitter=0.0)
    twice = record_attempt(once, failing, at=T0, policy=POLICY, jitter=1.0)
    thrice = record_attempt(twice, failing, at=T0, policy=POLICY, jitter=0.0)

    assert once.status is DeliveryStatus.PENDING
    assert once.next_attempt_at == T0 + timedelta(seconds=1)  # half of the first bound, 2 s
    assert twice.next_attempt_at == T0 + timedelta(seconds=4)  # the whole second bound
    assert thrice.status is DeliveryStatus.FAILED
    assert thrice.failure_reason == "gave up after 3 attempts; the last: the receiver answered 503"
    assert [a.number for a in thrice.attempts] == [1, 2, 3]


def test_an_answer_that_is_not_retried_fails_it_at_once() -> None:
    gone = AttemptOutcome(duration_ms=1, status_code=410, error="the receiver answered 410 Gone")

    failed = record_attempt(delivery(), gone, at=T0, policy=POLICY, jitter=0.5)

    assert failed.status is DeliveryStatus.FAILED
    assert failed.failure_reason == "the receiver answered 410 Gone"


def test_a_longer_retry_after_wins_over_the_backoff_within_the_longest_wait() -> None:
    busy = AttemptOutcome(duration_ms=0, status_code=429, error="busy", retryable=True, retry_after_s=3600)

    later = record_attempt(delivery(), busy, at=T0, policy=POLICY, jitter=0.0)

    assert later.next_attempt_at == T0 + timedelta(seconds=POLICY.max_delay_s)


@pytest.mark.parametrize(("retry", "low", "high"), [(1, 1.0, 2.0), (2, 2.0, 4.0), (3, 2.5, 5.0), (40, 2.5, 5.0)])
def test_the_backoff_doubles_up_to_the_longest_wait_with_equal_jitter(retry: int, low: float, high: float) -> None:
    assert POLICY.delay_s(retry, 0.0) == low
    assert POLICY.delay_s(retry, 0.999999) == pytest.approx(high, rel=1e-5)
