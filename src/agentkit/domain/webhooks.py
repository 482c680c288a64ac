"""Webhook deliveries: one signed POST per run event to the run's callback URL, retried until it lands or gives up.

    pending ──▶ delivered        (the receiver answered 2xx)
       │ ▲
       └─┘ retried              (a connection error, a timeout, 5xx or 429: after a backoff)
       └──▶ failed              (another answer, a refused address, or the last attempt failed)

A run has an event when it enters `requires_action` and when it reaches its terminal status. Each
event is one delivery with a stable id (the `webhook-id` header, the same on every retry, so a
receiver can drop repeats); every attempt is kept on it: when, what came back, how long it took.
"""

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final

import msgspec

from agentkit.domain.ids import OwnerId, RunId

MAX_REASON_CHARS: Final = 500


class DeliveryStatus(StrEnum):
    """Where a delivery is."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"

    @property
    def is_final(self) -> bool:
        """Whether nothing more will be sent."""
        return self is not DeliveryStatus.PENDING


class WebhookAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """One POST of a delivery.

    Attributes:
        number: 1 for the first attempt.
        at: When it was sent.
        duration_ms: From the connection to the end of the answer (or the error).
        status_code: The receiver's HTTP status, None when none came (connection error, timeout, refusal).
        error: What went wrong, None when the receiver answered 2xx.
    """

    number: int
    at: datetime
    duration_ms: float
    status_code: int | None = None
    error: str | None = None


class AttemptOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one POST came to, as the transport saw it.

    Attributes:
        duration_ms: How long it took.
        status_code: The receiver's HTTP status, if it answered.
        error: Why it did not land (None for a 2xx answer).
        retryable: Whether another attempt may succeed (connection errors, timeouts, 5xx, 429).
        retry_after_s: The receiver's Retry-After, if it gave one.
    """

    duration_ms: float
    status_code: int | None = None
    error: str | None = None
    retryable: bool = False
    retry_after_s: float | None = None

    @property
    def delivered(self) -> bool:
        """Whether the receiver took it (2xx)."""
        return self.status_code is not None and 200 <= self.status_code < 300


class WebhookDelivery(msgspec.Struct, frozen=True, kw_only=True):
    """One event of one run, on its way to the run's callback URL.

    Attributes:
        id: The `webhook-id`: the same for every attempt, so the receiver can drop repeats.
        run_id: The run the event is about.
        owner: The run's owner (only they see the delivery).
        event: The event type, `run.<status>` (`run.succeeded`, `run.requires_action`, ...).
        url: Where it is POSTed.
        payload: The exact JSON body (the run as GET /v1/runs/{id} showed it at the event), signed as is.
        status: pending, delivered or failed.
        attempts: Every attempt so far, oldest first.
        created_at: When the event happened.
        next_attempt_at: When a pending delivery is due (or until when a sender holds it).
        finished_at: When it was delivered or given up.
        failure_reason: Why it failed, in words.
    """

    id: str
    run_id: RunId
    owner: OwnerId
    event: str
    url: str
    payload: str
    created_at: datetime
    next_attempt_at: datetime
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: tuple[WebhookAttempt, ...] = ()
    finished_at: datetime | None = None
    failure_reason: str | None = None


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How often and how patiently a delivery is retried.

    Attributes:
        max_attempts: Attempts before the delivery fails for good.
        first_delay_s: The wait before the second attempt (before jitter); each next one doubles.
        max_delay_s: The longest wait between two attempts.
    """

    max_attempts: int = 10
    first_delay_s: float = 2.0
    max_delay_s: float = 900.0

    def delay_s(self, retry: int, jitter: float) -> float:
        """The wait before retry `retry` (1: the second attempt), `jitter` in [0, 1) drawn by the caller.

        Equal jitter: between half the exponential bound and the bound, so retries of many deliveries
        that failed together spread out, yet none comes back almost at once.
        """
        bound = min(self.max_delay_s, self.first_delay_s * 2.0 ** min(retry - 1, 40))
        return bound / 2 + bound / 2 * jitter


def record_attempt(
    delivery: WebhookDelivery, outcome: AttemptOutcome, *, at: datetime, policy: RetryPolicy, jitter: float
) -> WebhookDelivery:
    """The delivery with one more attempt: delivered, due again after a backoff, or failed.

    A receiver's Retry-After (bounded by the policy's longest wait) wins over the backoff when longer.
    """
    number = len(delivery.attempts) + 1
    attempt = WebhookAttempt(
        number=number,
        at=at,
        duration_ms=round(outcome.duration_ms, 3),
        status_code=outcome.status_code,
        error=None if outcome.delivered else _short(outcome.error or f"the receiver answered {outcome.status_code}"),
    )
    attempts = (*delivery.attempts, attempt)
    finished_at = at + timedelta(milliseconds=outcome.duration_ms)
    if outcome.delivered:
        return msgspec.structs.replace(
            delivery, attempts=attempts, status=DeliveryStatus.DELIVERED, finished_at=finished_at
        )
    if not outcome.retryable or number >= policy.max_attempts:
        why = attempt.error or "failed"
        reason = why if not outcome.retryable else f"gave up after {number} attempts; the last: {why}"
        return msgspec.structs.replace(
            delivery,
            attempts=attempts,
            status=DeliveryStatus.FAILED,
            finished_at=finished_at,
            failure_reason=_short(reason),
        )
    wait = policy.delay_s(number, jitter)
    if outcome.retry_after_s is not None:
        wait = max(wait, min(outcome.retry_after_s, policy.max_delay_s))
    return msgspec.structs.replace(delivery, attempts=attempts, next_attempt_at=finished_at + timedelta(seconds=wait))


def _short(text: str) -> str:
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"
