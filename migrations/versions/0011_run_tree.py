"""Agents that call agents: a child run names its parent, its lineage, and a run adds up its children's usage.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("parent_run_id", sa.Uuid(as_uuid=False)))
    op.add_column("runs", sa.Column("parent_call_id", sa.Text()))
    op.add_column("runs", sa.Column("parent_step_no", sa.Integer()))
    op.add_column("runs", sa.Column("lineage", JSONB(none_as_null=True)))
    op.add_column("runs", sa.Column("children_input_tokens", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("runs", sa.Column("children_output_tokens", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("runs", sa.Column("children_cost_usd", sa.Double()))
    op.create_index(
        "ix_runs_parent_run_id_created_at",
        "runs",
        ["parent_run_id", "created_at"],
        postgresql_where=sa.text("parent_run_id IS NOT NULL"),
    )
    op.create_index(
        "ix_runs_waiting_expires_at", "runs", ["expires_at"], postgresql_where=sa.text("status = 'waiting'")
    )


def downgrade() -> None:
    op.drop_index("ix_runs_waiting_expires_at", table_name="runs")
    op.drop_index("ix_runs_parent_run_id_created_at", table_name="runs")
    for column in (
        "children_cost_usd",
        "children_output_tokens",
        "children_input_tokens",
        "lineage",
        "parent_step_no",
        "parent_call_id",
        "parent_run_id",
    ):
        op.drop_column("runs", column)
