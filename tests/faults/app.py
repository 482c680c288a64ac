"""`agentkit serve` as a subprocess on the private servers, with a scripted model and a slow tool.

The real app: the composition root builds it from the environment, uvicorn serves
it on a free loopback port. Each run asks the model three times, calls the `pause` tool twice
(0.25 s each, so runs are in flight when a server goes away) and answers: five trace steps.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import msgspec

from tests.faults.servers import free_port

API_KEY = "fault-key-" + "f" * 16
STEPS_PER_RUN = 5
TOOL_MODULE = '''"""The fault suite's tool."""

import asyncio

from agentkit import tool


@tool
async def pause(i: int) -> str:
    """Wait a quarter of a second, as a tool doing real work would.

    Args:
        i: A counter, so that no two calls are the same.
    """
    await asyncio.sleep(0.25)
    return f"paused {i}"
'''
SCRIPT = [
    {"text": "one", "tool_calls": [{"name": "pause", "arguments": {"i": 1}}], "input_tokens": 10, "output_tokens": 5},
    {"text": "two", "tool_calls": [{"name": "pause", "arguments": {"i": 2}}], "input_tokens": 10, "output_tokens": 5},
    {"text": "done", "input_tokens": 10, "output_tokens": 5},
]
# The bounds the suite runs the app with: smaller than the defaults, so that a freeze of a few
# seconds outlasts them and shows they hold.
BOUNDS = {
    "DATABASE_CONNECT_TIMEOUT_S": "1",
    "DATABASE_POOL_TIMEOUT_S": "1",
    "DATABASE_STATEMENT_TIMEOUT_S": "2",
    "REDIS_CONNECT_TIMEOUT_S": "1",
    "REDIS_SOCKET_TIMEOUT_S": "1",
    "TRACE_WRITE_TIMEOUT_S": "3",
}
# Measured against a frozen server: a statement that times out on a pooled connection costs up to two
# statement bounds before the error arrives (SQLAlchemy's clean-up of the connection is bounded the
# same way), so one database call waits at most a pool wait and two statement bounds.
DATABASE_CALL_BOUND_S = float(BOUNDS["DATABASE_POOL_TIMEOUT_S"]) + 2 * float(BOUNDS["DATABASE_STATEMENT_TIMEOUT_S"])


class AppServer:
    """One `agentkit serve` (or `agentkit worker`) process; its JSON log in `work/<command>.log`.

    Args:
        work: A folder for the tool module, the script and the log.
        database_url: The private PostgreSQL database.
        redis_url: The private Redis.
        settings: More environment variables (they win over the suite's).
    """

    def __init__(
        self, work: Path, database_url: str, redis_url: str, *, command: str = "serve", **settings: str
    ) -> None:
        self.work = work
        self.command = command
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / f"{command}.log"
        (work / "fault_tools.py").write_text(TOOL_MODULE)
        (work / "script.json").write_bytes(msgspec.json.encode(SCRIPT))
        # Only what the suite sets: the machine's own DATABASE_URL / REDIS_URL must not leak in.
        inherited = {key: os.environ[key] for key in ("PATH", "HOME", "LANG", "TMPDIR") if key in os.environ}
        self.env = {
            **inherited,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "STATE_BACKEND": "external",
            "API_KEYS": API_KEY,
            "RATE_LIMIT_PER_MIN": "100000000",
            "LOG_LEVEL": "INFO",
            "LOG_FORMAT": "json",
            "LLM_PROVIDER": "scripted",
            "LLM_SCRIPT": str(work / "script.json"),
            "AGENTKIT_TOOL_MODULES": "fault_tools",
            "PYTHONPATH": str(work),
            "RESPONSE_TIMEOUT_S": "3",
            **BOUNDS,
            **settings,
        }
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60.0) -> None:
        """Start the process; wait until /health says ok (serve) or the worker says it started (worker)."""
        argv = [sys.executable, "-m", "agentkit", self.command]
        if self.command == "serve":
            argv += ["--port", str(self.port)]
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                argv, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"agentkit {self.command} exited with {self._proc.returncode}:\n{self.tail()}")
            if self._ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f"agentkit {self.command} was not ready after {timeout_s:g} s:\n{self.tail()}")

    def _ready(self) -> bool:
        if self.command != "serve":
            return bool(self.count("worker_started"))
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"{self.url}/health", timeout=2).status_code == 200
        return False

    def kill(self) -> None:
        """kill -9: the process dies at once, with whatever it held."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(30)

    def stop(self, sig: signal.Signals = signal.SIGINT, timeout_s: float = 90.0) -> float:
        """Stop the server with `sig` (graceful); return how long it took to exit."""
        if self._proc is None or self._proc.poll() is not None:
            return 0.0
        began = time.monotonic()
        self._proc.send_signal(sig)
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(30)
            raise RuntimeError(f"agentkit {self.command} did not stop within {timeout_s:g} s:\n{self.tail()}") from None
        return time.monotonic() - began

    @property
    def exit_code(self) -> int | None:
        """The exit status, once it stopped."""
        return None if self._proc is None else self._proc.poll()

    def events(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far."""
        records = []
        for line in self.log.read_text(errors="replace").splitlines():
            with contextlib.suppress(msgspec.DecodeError):
                record = msgspec.json.decode(line)
                if isinstance(record, dict):
                    records.append(record)
        return records

    def count(self, *events: str) -> Counter[str]:
        """How often each of these events was logged."""
        wanted = set(events)
        return Counter(str(r.get("event")) for r in self.events() if r.get("event") in wanted)

    def tail(self, chars: int = 4000) -> str:
        """The end of the log, for failure messages."""
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""
