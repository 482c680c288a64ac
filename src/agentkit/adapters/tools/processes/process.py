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

    `launch` starts it and has the event loop watch for its end at once, before anything can be
    awaited (so even a start cancelled halfway is reaped); `handshake` makes it ready for calls.

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
        self._owned: list[Any] = []  # the pipes a transport took (it closes them)

    @classmethod
    def launch(cls, env: dict[str, str], on_gone: Callable[["WorkerProcess"], None]) -> "WorkerProcess":
        """Start a worker process, watched from now on (not yet ready for calls).

        Raises:
            OSError: it could not be started.
        """
        worker = cls(_launch(env), on_gone)
        try:
            worker._pidfd = os.pidfd_open(worker.pid)
        except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
            worker._poller = asyncio.ensure_future(worker._poll())
        else:
            worker._loop.add_reader(worker._pidfd, worker._exited)
        return worker

    async def handshake(self, hello: dict[str, Any]) -> None:
        """Connect to the process and send it its hello; return once it is ready for calls (else kill it).

        Raises:
            WorkerDied: it ended before it was ready (the hello's limits too tight, say).
        """
        try:
            loop = self._loop
            assert self.popen.stdin is not None  # noqa: S101 - piped by _launch
            assert self.popen.stdout is not None  # noqa: S101 - piped by _launch
            self._reader, _ = await loop.connect_read_pipe(lambda: _Replies(self), self.popen.stdout)
            self._owned.append(self.popen.stdout)
            self._writer, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, self.popen.stdin)
            self._owned.append(self.popen.stdin)
            ready = pickle.loads(await self.ask(encode_frame(hello)))  # noqa: S301 - our worker's pipe
        except BaseException:
            self.kill()
            raise
        if ready[0] != "ready":
            self.kill()
            raise WorkerDied(f"the worker process answered {ready[0]!r} instead of getting ready")

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
                transport.close()  # it closes its pipe
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
        for pipe in (self.popen.stdin, self.popen.stdout):
            if pipe is not None and pipe not in self._owned:
                pipe.close()  # a start cancelled before a transport took it: it would leak
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
