"""A queue worker in a process of its own (`agentkit worker`), on the test's database, Redis prefix and queue."""

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.state_fixtures import StateServers


def queue_env(state_servers: StateServers, redis_prefix: str) -> dict[str, str]:
    """Queue mode on the test's database, its Redis prefix and a queue of its own."""
    return {
        "DATABASE_URL": state_servers.database_url.render_as_string(hide_password=False),
        "REDIS_URL": state_servers.redis_url,
        "REDIS_KEY_PREFIX": redis_prefix,
        "RUN_QUEUE_NAME": f"{redis_prefix}runs",
        "STATE_BACKEND": "external",
        "RUN_MODE": "queue",
        "LOG_LEVEL": "WARNING",
    }


@contextlib.contextmanager
def worker_process(env: dict[str, str], script: list[dict[str, Any]], folder: Path) -> Iterator[dict[str, str]]:
    """`agentkit worker` on `env` with a scripted model playing `script`; yields its settings, stopped on exit."""
    script_file = folder / "script.json"
    script_file.write_text(json.dumps(script))
    env = {**env, "LLM_PROVIDER": "scripted", "LLM_SCRIPT": str(script_file), "AGENTKIT_ENV_FILE": os.devnull}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "worker"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield env
    finally:
        process.terminate()
        try:
            process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
