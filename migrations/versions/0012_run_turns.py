"""The tree's steps: a run counts its LLM calls and those of its ended child runs, for the root's max_steps.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("turns", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("runs", sa.Column("children_turns", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("runs", "children_turns")
    op.drop_column("runs", "turns")
