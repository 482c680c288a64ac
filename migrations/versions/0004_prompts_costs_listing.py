"""Prompts stored once per run, costs and cost budgets, and the runs listing's keyset index.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = postgresql.JSONB(none_as_null=True)


def upgrade() -> None:
    op.add_column("runs", sa.Column("cost_usd", sa.Double(), nullable=True))
    op.add_column("runs", sa.Column("cost_budget", sa.Double(), nullable=True))
    op.add_column("steps", sa.Column("request", _JSON, nullable=True))
    op.add_column("steps", sa.Column("cost_usd", sa.Double(), nullable=True))
    op.create_index("ix_runs_owner_created_at_id", "runs", ["owner", "created_at", "id"])
    op.drop_index("ix_runs_owner_created_at", table_name="runs")
    op.create_table(
        "run_messages",
        sa.Column("run_id", sa.Uuid(as_uuid=False), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.Column("message", _JSON, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_messages_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "seq", name="pk_run_messages"),
    )
    op.create_table(
        "run_tool_sets",
        sa.Column("run_id", sa.Uuid(as_uuid=False), nullable=False),
        sa.Column("digest", sa.Text(), nullable=False),
        sa.Column("schemas", _JSON, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_tool_sets_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "digest", name="pk_run_tool_sets"),
    )


def downgrade() -> None:
    op.drop_table("run_tool_sets")
    op.drop_table("run_messages")
    op.create_index("ix_runs_owner_created_at", "runs", ["owner", "created_at"])
    op.drop_index("ix_runs_owner_created_at_id", table_name="runs")
    op.drop_column("steps", "cost_usd")
    op.drop_column("steps", "request")
    op.drop_column("runs", "cost_budget")
    op.drop_column("runs", "cost_usd")
