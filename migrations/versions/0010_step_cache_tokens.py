"""Prompt caching: an LLM step records the input tokens read from and written to the provider's cache.

Both are parts of `input_tokens` (which counts every input token); Anthropic bills them at their own
prices, so the trace shows them and the cost accounts for them. Steps stored before read 0.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("steps", sa.Column("cache_read_tokens", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("steps", sa.Column("cache_write_tokens", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("steps", "cache_write_tokens")
    op.drop_column("steps", "cache_read_tokens")
