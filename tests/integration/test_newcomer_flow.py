"""A newcomer's first hour, with nothing configured: `agentkit serve` on the embedded state, the README's
question, then the admin commands in another process finding that run on the same data."""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.integration.serving import ServedProcess

pytestmark = pytest.mark.integration

KEY = {"X-API-Key": "dev-key"}
QUESTION = "How much did our top customer spend, and what is 15% of that?"
# what a fresh clone has: none of the state or provider variables set
UNSET = ("DATABASE_URL", "REDIS_URL", "POSTGRES_HOST", "STATE_BACKEND", "LLM_PROVIDER", "LLM_SCRIPT", "LLM_MODEL")


def fresh_env(data_dir: Path, **extra: str) -> dict[str, str]:
    # empty is unset to AgentKit; ServedProcess lays these over the test's own environment
    env = {**os.environ, **dict.fromkeys(UNSET, "")}
    return {**env, "AGENTKIT_DATA_DIR": str(data_dir), "AGENTKIT_ENV_FILE": os.devnull, **extra}


def agentkit(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "agentkit", *argv], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_admin_commands_find_the_run_the_server_made_on_the_embedded_state(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServedProcess(fresh_env(data, API_KEYS="dev-key"))
    # the server is not needed by the second half; it must simply keep running meanwhile
    try:
        server.wait_until_healthy()
        created = httpx.post(f"{server.base_url}/v1/runs", json={"goal": QUESTION}, headers=KEY, timeout=120)
        assert created.status_code == 201, created.text
        run = created.json()
        assert "2,870.79" in run["answer"]
        assert "430.62" in run["answer"]

        shown = agentkit(fresh_env(data, LOG_LEVEL="INFO"), "runs", "show", run["id"])
        traced = agentkit(fresh_env(data), "runs", "trace", run["id"])
    finally:
        output = server.stop()

    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == run["id"]
    assert shown.stderr.splitlines()[0] == (
        f"agentkit: state: embedded PostgreSQL and Redis in {data.resolve()} (the data `agentkit serve` uses)"
    )
    # the command only let go of the server's PostgreSQL and Redis: it says so, and not that it stopped them
    assert "embedded_postgres_left" in shown.stderr
    assert "embedded_postgres_stopped" not in shown.stderr
    assert "embedded_redis_stopped" not in shown.stderr

    assert traced.returncode == 0, traced.stderr
    tools = [step["tool_name"] for step in json.loads(traced.stdout) if step["type"] == "tool"]
    assert tools == ["sql_readonly", "calculator"]
    assert traced.stderr.count("\n") == 1  # quiet: the state line and nothing else

    # the server, the last user of both, stops them, and says nothing untrue about it
    assert "embedded_postgres_stopped" in output
    assert "embedded_redis_stopped" in output
    assert "shutdown failed" not in output.lower()
    assert "Traceback" not in output


def test_prune_on_the_embedded_state_says_where_it_pruned(tmp_path: Path) -> None:
    pruned = agentkit(fresh_env(tmp_path), "prune", "--older-than", "1d")

    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout == "deleted 0 runs (with their steps) and 0 sessions\n"
    assert pruned.stderr.startswith(f"agentkit: state: embedded PostgreSQL and Redis in {tmp_path.resolve()}")
