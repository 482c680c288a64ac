"""The Postgres WebhookOutbox: deliveries in `webhook_deliveries`, claimed with FOR UPDATE SKIP LOCKED."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import msgspec
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import store_outage
from agentkit.adapters.postgres.mapping import is_uuid
from agentkit.adapters.postgres.tables import webhook_deliveries as table
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.webhooks import DeliveryStatus, WebhookAttempt, WebhookDelivery

_guarded = store_outage("PostgreSQL")
_PENDING: Final = DeliveryStatus.PENDING.value


def _to_row(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "run_id": delivery.run_id,
        "owner": delivery.owner,
        "event": delivery.event,
        "url": delivery.url,
        "payload": delivery.payload,
        "status": delivery.status.value,
        "attempts": list(delivery.attempts),
        "attempt_count": len(delivery.attempts),
        "created_at": delivery.created_at,
        "next_attempt_at": delivery.next_attempt_at,
        "finished_at": delivery.finished_at,
        "failure_reason": delivery.failure_reason,
    }


def _from_row(row: Mapping[Any, Any]) -> WebhookDelivery:
    return WebhookDelivery(
        id=row["id"],
        run_id=RunId(str(row["run_id"])),
        owner=OwnerId(row["owner"]),
        event=row["event"],
        url=row["url"],
        payload=row["payload"],
        status=DeliveryStatus(row["status"]),
        attempts=msgspec.convert(row["attempts"], tuple[WebhookAttempt, ...]),
        created_at=row["created_at"],
        next_attempt_at=row["next_attempt_at"],
        finished_at=row["finished_at"],
        failure_reason=row["failure_reason"],
    )


class SqlaWebhookOutbox(WebhookOutbox):
    """Deliveries in PostgreSQL, shared by every process; each method one short statement (autocommit).

    Claiming is one UPDATE over a `FOR UPDATE SKIP LOCKED` selection: senders in several processes
    claim at once without waiting on each other and never take the same row. No transaction stays
    open across a POST: the claim moves the row's due time to the hold's end, and the attempt's
    outcome is a second, fenced UPDATE.

    Raises StoreUnavailable when PostgreSQL cannot serve (see `agentkit.adapters.outage`).
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._single = engine.execution_options(isolation_level="AUTOCOMMIT")

    @_guarded
    async def add(self, delivery: WebhookDelivery) -> bool:
        """Insert the delivery unless its id is taken (the same event seen by two processes)."""
        stmt = insert(table).values(_to_row(delivery)).on_conflict_do_nothing(index_elements=[table.c.id])
        async with self._single.connect() as conn:
            inserted = (await conn.execute(stmt.returning(table.c.id))).first()
        return inserted is not None

    @_guarded
    async def claim_due(self, now: datetime, *, hold_until: datetime, limit: int) -> list[WebhookDelivery]:
        """Hold up to `limit` due pending deliveries for this sender, earliest first."""
        due = (
            select(table.c.id)
            .where(table.c.status == _PENDING, table.c.next_attempt_at <= now)
            .order_by(table.c.next_attempt_at, table.c.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        stmt = update(table).where(table.c.id.in_(due)).values(next_attempt_at=hold_until).returning(*table.c)
        async with self._single.connect() as conn:
            rows = (await conn.execute(stmt)).mappings().all()
        return sorted((_from_row(row) for row in rows), key=lambda d: d.id)

    @_guarded
    async def save(self, delivery: WebhookDelivery, *, attempts_before: int) -> bool:
        """Write the attempt's outcome, fenced on the delivery still pending with `attempts_before` attempts."""
        row = _to_row(delivery)
        stmt = (
            update(table)
            .where(table.c.id == delivery.id, table.c.status == _PENDING, table.c.attempt_count == attempts_before)
            .values({key: row[key] for key in row if key not in ("id", "run_id", "owner", "created_at")})
            .returning(table.c.id)
        )
        async with self._single.connect() as conn:
            written = (await conn.execute(stmt)).first()
        return written is not None

    @_guarded
    async def of_run(self, run_id: RunId) -> list[WebhookDelivery]:
        """The run's deliveries, oldest first."""
        if not is_uuid(run_id):
            return []
        query = select(table).where(table.c.run_id == run_id).order_by(table.c.created_at, table.c.id)
        async with self._single.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_from_row(row) for row in rows]
