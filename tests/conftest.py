"""Root fixtures. PostgreSQL and Redis: tests/state_fixtures.py; the demo database: tests/demo_fixtures.py."""

import os
from collections.abc import Iterator

import pytest

from agentkit.entrypoints.wiring.logging import reset_logging

pytest_plugins = ["tests.state_fixtures", "tests.demo_fixtures", "tests.http_fixtures"]


@pytest.fixture(autouse=True)
def no_env_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own `.env` must not change what the tests see (tests of the file name their own)."""
    monkeypatch.setenv("AGENTKIT_ENV_FILE", os.devnull)


@pytest.fixture(autouse=True)
def fresh_logging() -> Iterator[None]:
    """Undo what a test's `configure_logging` did, so no later test logs to a closed capture stream."""
    yield
    reset_logging()
