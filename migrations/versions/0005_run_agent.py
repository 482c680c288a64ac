"""Which agent profile a run ran with, and which version of it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # runs stored before agents existed ran with what is now the `default` agent
    op.add_column("runs", sa.Column("agent", sa.Text(), nullable=False, server_default="default"))
    op.add_column("runs", sa.Column("agent_version", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "agent_version")
    op.drop_column("runs", "agent")
