"""Fixtures for tests that run AgentKit's commands against real PostgreSQL and Redis."""

import json
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.state_fixtures import StateServers

SCRIPT = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}], "input_tokens": 30},
    {"text": "42", "input_tokens": 40, "output_tokens": 2},
]


@pytest.fixture
def server_env(
    state_servers: StateServers,
    pg_engine: AsyncEngine,
    redis_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> dict[str, str]:
    """The environment a user would set to point AgentKit at their servers (tables emptied first)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    env = {
        "DATABASE_URL": state_servers.database_url.render_as_string(hide_password=False),
        "REDIS_URL": state_servers.redis_url,
        "REDIS_KEY_PREFIX": redis_prefix,
        "STATE_BACKEND": "external",
        "LLM_PROVIDER": "scripted",
        "LLM_SCRIPT": str(script),
        "LOG_LEVEL": "WARNING",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
