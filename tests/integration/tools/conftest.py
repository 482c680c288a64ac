"""The read-only query runner on the seeded demo database (see tests/demo_fixtures.py)."""

from collections.abc import AsyncIterator

import pytest

from agentkit.adapters.tools.sql_readonly import AsyncpgReadOnlyQueryRunner
from tests.demo_fixtures import STATEMENT_TIMEOUT_MS, DemoDatabase


@pytest.fixture
async def runner(demo_db: DemoDatabase) -> AsyncIterator[AsyncpgReadOnlyQueryRunner]:
    """The production query runner on the demo database, with a small row limit and timeout."""
    runner = AsyncpgReadOnlyQueryRunner(demo_db.reader_dsn(), row_limit=5, statement_timeout_ms=STATEMENT_TIMEOUT_MS)
    yield runner
    await runner.aclose()
