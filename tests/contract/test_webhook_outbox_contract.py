"""WebhookOutbox contract: stored once per id, due deliveries claimed by one sender at a time, fenced saves."""

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.memory import InMemoryRunRepository, InMemoryWebhookOutbox
from agentkit.adapters.postgres import SqlaRunRepository
from agentkit.adapters.postgres.webhooks import SqlaWebhookOutbox
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.webhooks import AttemptOutcome, DeliveryStatus, RetryPolicy, WebhookDelivery, record_attempt

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOLD = T0 + timedelta(seconds=40)
POLICY = RetryPolicy(max_attempts=3)


@pytest.fixture(params=["memory", pytest.param("real", marks=pytest.mark.integration)])
def stores(request: pytest.FixtureRequest) -> tuple[RunRepository, WebhookOutbox]:
    """A run repository (deliveries belong to stored runs) and the outbox beside it."""
    if request.param == "memory":
        return InMemoryRunRepository(), InMemoryWebhookOutbox()
    engine: AsyncEngine = request.getfixturevalue("pg_engine")
    return SqlaRunRepository(engine), SqlaWebhookOutbox(engine)


async def delivery(runs: RunRepository, *, due: datetime = T0, event: str = "run.succeeded") -> WebhookDelivery:
    run = Run(id=RunId(str(uuid.uuid4())), owner=OwnerId("key-1"), goal="g", created_at=T0)
    await runs.add(run)
    return WebhookDelivery(
        id=f"msg_{uuid.uuid4().hex}",
        run_id=run.id,
        owner=run.owner,
        event=event,
        url="https://hooks.example/in",
        payload='{"type":"run.succeeded","data":{"goal":"é ✓"}}',
        created_at=T0,
        next_attempt_at=due,
    )


async def test_a_delivery_is_stored_once_and_read_back_as_it_was(stores: tuple[RunRepository, WebhookOutbox]) -> None:
    runs, outbox = stores
    made = await delivery(runs)

    assert await outbox.add(made) is True
    assert await outbox.add(msgspec.structs.replace(made, url="https://other.example/")) is False

    assert await outbox.of_run(made.run_id) == [made]
    assert await outbox.of_run(RunId(str(uuid.uuid4()))) == []


async def test_only_due_pending_deliveries_are_claimed_earliest_first_and_held(
    stores: tuple[RunRepository, WebhookOutbox],
) -> None:
    runs, outbox = stores
    early = await delivery(runs, due=T0 - timedelta(seconds=5))
    now = await delivery(runs, due=T0)
    later = await delivery(runs, due=T0 + timedelta(seconds=5))
    for made in (later, now, early):
        await outbox.add(made)

    first = await outbox.claim_due(T0, hold_until=HOLD, limit=1)
    rest = await outbox.claim_due(T0, hold_until=HOLD, limit=10)

    assert [d.id for d in first] == [early.id]
    assert [d.id for d in rest] == [now.id]  # the held one is not due again; the later one is not due yet
    assert first[0].next_attempt_at == HOLD
    assert await outbox.claim_due(HOLD, hold_until=HOLD + timedelta(seconds=40), limit=10) != []  # the holds lapsed


async def test_concurrent_claims_never_hand_out_the_same_delivery(stores: tuple[RunRepository, WebhookOutbox]) -> None:
    runs, outbox = stores
    made = [await delivery(runs) for _ in range(20)]
    for item in made:
        await outbox.add(item)

    claims = await asyncio.gather(*(outbox.claim_due(T0, hold_until=HOLD, limit=3) for _ in range(10)))

    claimed = [d.id for batch in claims for d in batch]
    assert sorted(claimed) == sorted(d.id for d in made)


async def test_an_attempt_is_saved_once_a_stale_sender_is_fenced_off_and_final_ones_are_not_claimed(
    stores: tuple[RunRepository, WebhookOutbox],
) -> None:
    runs, outbox = stores
    made = await delivery(runs)
    await outbox.add(made)
    [held] = await outbox.claim_due(T0, hold_until=HOLD, limit=5)
    failing = AttemptOutcome(duration_ms=12.5, status_code=500, error="the receiver answered 500", retryable=True)
    retried = record_attempt(held, failing, at=T0, policy=POLICY, jitter=0.5)

    assert await outbox.save(retried, attempts_before=0) is True
    assert await outbox.save(retried, attempts_before=0) is False  # a second sender with the same claim

    due = retried.next_attempt_at
    [again] = await outbox.claim_due(due, hold_until=due + timedelta(seconds=40), limit=5)
    assert again.attempts == retried.attempts
    delivered = record_attempt(again, AttemptOutcome(duration_ms=3, status_code=200), at=due, policy=POLICY, jitter=0)
    assert await outbox.save(delivered, attempts_before=1) is True

    [stored] = await outbox.of_run(made.run_id)
    assert stored.status is DeliveryStatus.DELIVERED
    assert [(a.number, a.status_code, a.error) for a in stored.attempts] == [
        (1, 500, "the receiver answered 500"),
        (2, 200, None),
    ]
    assert stored.attempts[0].duration_ms == 12.5
    assert stored.finished_at == delivered.finished_at
    assert await outbox.claim_due(due + timedelta(days=1), hold_until=due + timedelta(days=2), limit=5) == []
    assert await outbox.save(delivered, attempts_before=2) is False  # a final delivery is never written again
