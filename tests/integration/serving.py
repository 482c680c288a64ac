"""`agentkit serve` as a real process on a free loopback port, for tests that need the whole server."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping

import httpx

# Generous: on a loaded 2-core machine a cold start (imports, pools, migrations checked) can take long.
START_TIMEOUT_S = 180.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ServedProcess:
    """A running `agentkit serve`; `stop()` sends SIGTERM and collects what it printed."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentkit", "serve"],
            env={**os.environ, **env, "PORT": str(self.port)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = ""

    def wait_until_healthy(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Return once /health answers 200; fail with the server's output if it exits or never does."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(f"{self.base_url}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited at start-up:\n{self.collect()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not come up in {timeout_s:g} s")
            time.sleep(0.2)

    def terminate(self) -> None:
        """Send SIGTERM (the way a process manager stops a service)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def collect(self, timeout_s: float = 60.0) -> str:
        """Wait for the process to exit and return everything it printed."""
        out, _ = self.process.communicate(timeout=timeout_s)
        self.output += out or ""
        return self.output

    def stop(self) -> str:
        """SIGTERM, then wait for the exit; kill -9 if it does not come. Returns the output."""
        self.terminate()
        try:
            return self.collect()
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.collect()
