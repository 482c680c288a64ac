"""Parallel tool calls: a run records every non-idempotent call of a batch it starts, not one.

`runs.calling` goes from one call id (text) to a JSON array of call ids; a stored id becomes a
one-element array, so a run interrupted across the upgrade still knows which call may have run.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE runs ALTER COLUMN calling TYPE jsonb "
        "USING CASE WHEN calling IS NULL THEN NULL ELSE jsonb_build_array(calling) END"
    )


def downgrade() -> None:
    # the older schema holds one id: the batch's first
    op.execute("ALTER TABLE runs ALTER COLUMN calling TYPE text USING calling ->> 0")
