"""Runs and steps: the spec's data model plus owner, output, lease, cancel, idempotency and attempt.

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Uuid(as_uuid=False), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("goal", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("final_answer", sa.Text(), nullable=True),
        sa.Column("output", postgresql.JSONB(none_as_null=True), nullable=True),
        sa.Column("output_schema", postgresql.JSONB(none_as_null=True), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("max_steps", sa.Integer(), nullable=False),
        sa.Column("total_input_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("total_output_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("started_at", _TIME, nullable=True),
        sa.Column("finished_at", _TIME, nullable=True),
        sa.Column("expires_at", _TIME, nullable=True),
        sa.Column("heartbeat_at", _TIME, nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("idempotency_key", sa.Text(), nullable=True),
        sa.Column("request_fingerprint", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_session_id", "runs", ["session_id"])
    op.create_index("ix_runs_owner_created_at", "runs", ["owner", "created_at"])
    op.create_index(
        "uq_runs_owner_idempotency_key",
        "runs",
        ["owner", "idempotency_key"],
        unique=True,
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )
    op.create_index(
        "ix_runs_unfinished_expires_at",
        "runs",
        ["expires_at"],
        postgresql_where=sa.text("status IN ('pending', 'running')"),
    )
    op.create_index("ix_runs_finished_at", "runs", ["finished_at"], postgresql_where=sa.text("finished_at IS NOT NULL"))

    op.create_table(
        "steps",
        sa.Column("id", sa.Uuid(as_uuid=False), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("run_id", sa.Uuid(as_uuid=False), nullable=False),
        sa.Column("step_no", sa.Integer(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("tool_name", sa.Text(), nullable=True),
        sa.Column("call_id", sa.Text(), nullable=True),
        sa.Column("args", postgresql.JSONB(none_as_null=True), nullable=True),
        sa.Column("result", postgresql.JSONB(none_as_null=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Double(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("output_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_steps_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_steps"),
    )
    op.create_index("ix_steps_run_id_step_no", "steps", ["run_id", "step_no"])


def downgrade() -> None:
    op.drop_table("steps")
    op.drop_table("runs")
