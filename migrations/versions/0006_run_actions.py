"""Paused runs: the calls a run waits on, its per-run approval and client tools, its webhook URL.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("action", postgresql.JSONB(none_as_null=True), nullable=True))
    op.add_column("runs", sa.Column("pauses", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("runs", sa.Column("approval_required", postgresql.JSONB(none_as_null=True), nullable=True))
    op.add_column("runs", sa.Column("client_tools", postgresql.JSONB(none_as_null=True), nullable=True))
    op.add_column("runs", sa.Column("callback_url", sa.Text(), nullable=True))
    # the sweeper ends paused runs nobody answered in time
    op.create_index(
        "ix_runs_requires_action_expires_at",
        "runs",
        ["expires_at"],
        postgresql_where=sa.text("status = 'requires_action'"),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_requires_action_expires_at", table_name="runs")
    op.drop_column("runs", "callback_url")
    op.drop_column("runs", "client_tools")
    op.drop_column("runs", "approval_required")
    op.drop_column("runs", "pauses")
    op.drop_column("runs", "action")
