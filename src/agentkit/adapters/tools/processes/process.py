"""WorkerProcess: one tool worker process as its parent sees it: calls out, replies in, kill and reap.

No thread watches it: its replies arrive through an asyncio pipe transport, and its exit through a
pidfd the event loop polls (Linux 5.3+; elsewhere a light poll of `Popen.poll`). A killed process
is reaped as soon as it is gone, so none lingers as a zombie.
"""

import asyncio
import contextlib
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentkit.adapters.tools.processes.worker import encode_frame, frames_in

WORKER = str(Path(__file__).with_name("worker.py"))
_POLL_S = 0.02


class WorkerDied(Exception):
    """The worker process ended (or was killed) before it answered."""


class _Replies(asyncio.Protocol):
    """The worker's stdout: frames, each handed to the worker as it completes."""

    def __init__(self, worker: "WorkerProcess") -> None:
        self._worker = worker
        self._buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        for frame in frames_in(self._buffer):
            self._worker.replied(frame)

    def connection_lost(self, exc: Exception | None) -> None:
        self._worker.lost()


class WorkerProcess:
    """A worker process, one call at a time.

    Args:
        popen: The process, started with pipes for its stdin and stdout.
        on_gone: Called once when the process has ended and been reaped.
    """

    def __init__(self, popen: "subprocess.Popen[bytes]", on_gone: Callable[["WorkerProcess"], None]) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.killed = False
        self._on_gone = on_gone
        self._loop = asyncio.get_running_loop()
        self._reply: asyncio.Future[bytes] | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._reader: asyncio.ReadTransport | None = None
        self.gone: asyncio.Future[int] = self._loop.create_future()
        self._pidfd = -1
        self._poller: asyncio.Task[None] | None = None

    @classmethod
    async def start(
        cls, *, env: dict[str, str], hello: dict[str, Any], on_gone: Callable[["WorkerProcess"], None]
    ) -> "WorkerProcess":
        """Start a worker and wait until it is ready for calls.

        Raises:
            WorkerDied: it ended before it was ready (the hello's limits too tight, say).
            OSError: it could not be started.
        """
        worker = cls(_launch(env), on_gone)
        try:
            await worker._connect()
            ready = pickle.loads(await worker.ask(encode_frame(hello)))  # noqa: S301 - our worker's pipe
        except BaseException:
            worker.kill()
            raise
        if ready[0] != "ready":
            worker.kill()
            raise WorkerDied(f"the worker process answered {ready[0]!r} instead of getting ready")
        return worker

    async def _connect(self) -> None:
        loop = self._loop
        assert self.popen.stdin is not None  # noqa: S101 - piped by _launch
        assert self.popen.stdout is not None  # noqa: S101 - piped by _launch
        self._reader, _ = await loop.connect_read_pipe(lambda: _Replies(self), self.popen.stdout)
        self._writer, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, self.popen.stdin)
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
            self._poller = asyncio.ensure_future(self._poll())
        else:
            loop.add_reader(self._pidfd, self._exited)

    @property
    def alive(self) -> bool:
        """Whether it may still take a call."""
        return not self.killed and not self.gone.done() and self._reader is not None

    async def ask(self, frame: bytes) -> bytes:
        """Send a frame and wait for the reply (its pickled payload).

        Raises:
            WorkerDied: the process ended before it replied.
        """
        if not self.alive or self._writer is None:
            raise WorkerDied("the worker process is gone")
        reply: asyncio.Future[bytes] = self._loop.create_future()
        self._reply = reply
        self._writer.write(frame)
        try:
            return await reply
        finally:
            self._reply = None

    def replied(self, payload: bytes) -> None:
        """A frame came from the process: the answer to the call in flight."""
        reply = self._reply
        if reply is not None and not reply.done():
            reply.set_result(payload)

    def lost(self) -> None:
        """Its stdout closed: it is ending. The call in flight, if any, gets no answer."""
        reply = self._reply
        if reply is not None and not reply.done():
            reply.set_exception(WorkerDied("the worker process ended"))
        self._close_pipes()

    def kill(self) -> None:
        """Kill the process and everything it started (its process group); it is reaped once gone."""
        self.killed = True
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for transport in (self._writer, self._reader):
            if transport is not None:
                transport.close()
        self._writer = self._reader = None

    def _exited(self) -> None:
        if self.popen.poll() is None:
            return
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = -1
        self._ended()

    async def _poll(self) -> None:
        while self.popen.poll() is None:  # noqa: ASYNC110 - no pidfd here: nothing but polling tells a child ended
            await asyncio.sleep(_POLL_S)
        self._ended()

    def _ended(self) -> None:
        self._close_pipes()
        if not self.gone.done():
            self.gone.set_result(self.popen.returncode if self.popen.returncode is not None else -1)
            self._on_gone(self)


def _launch(env: dict[str, str]) -> "subprocess.Popen[bytes]":
    """Start a worker: a fork and an exec, no wait (the event loop watches it from then on)."""
    return subprocess.Popen(  # noqa: S603 - this interpreter, our own worker script
        [sys.executable, "-I", WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        close_fds=True,
        start_new_session=True,  # its own process group: a kill takes what the tool started too
    )


def why_it_ended(returncode: int, *, cpu_s: float, memory_mb: int | None) -> str:
    """In words a model reads: why a worker process ended while a call ran in it."""
    if returncode >= 0:
        return f"its process exited with status {returncode}"
    number = -returncode
    if number == signal.SIGXCPU:
        return f"it went over its CPU time limit ({cpu_s:g} s); its process was stopped"
    if number == signal.SIGKILL:
        memory = f" (limit {memory_mb} MB)" if memory_mb else ""
        return f"its process was killed (SIGKILL), perhaps for want of memory{memory}"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"its process died of {name}"
