"""ProcessToolSandbox: a pool of tool worker processes, each killed when its call must stop."""

import asyncio
import os
import pickle
import sys
from collections import deque
from typing import Any

import msgspec
import structlog

from agentkit.adapters.tools.processes.process import WorkerDied, WorkerProcess, why_it_ended
from agentkit.adapters.tools.processes.worker import encode_frame
from agentkit.application.ports.tool_sandbox import FunctionRef, ToolRaised, ToolSandbox, ToolStopped
from agentkit.application.tools.errors import ToolError

logger = structlog.get_logger(__name__)

# What a worker's environment keeps of this process's: nothing that could be a secret.
_HARMLESS = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT")
_START_TIMEOUT_S = 60.0
_CLOSE_TIMEOUT_S = 5.0


class ProcessPoolConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The pool's size and each worker's limits.

    Attributes:
        size: Worker processes at most (started as calls need them, then kept).
        memory_mb: Each worker's address space (RLIMIT_AS); None: unlimited.
        cpu_s: CPU seconds one call may use (RLIMIT_CPU); None: as many as its time limit.
        env: Names of variables of this process's environment the workers get (beside PATH, HOME,
            the locale and the temporary folder): the service's secrets stay out.
    """

    size: int = 8
    memory_mb: int | None = 1024
    cpu_s: float | None = None
    env: tuple[str, ...] = ()


class ProcessToolSandbox(ToolSandbox):
    """Sync tools in worker processes: one call at a time each, killed at its time limit or on cancel.

    Rules:
    - A call waits for a free worker (started on demand, up to `size`); its time limit counts from
      when the worker takes it. Past it, or when the caller is cancelled (the run cancelled, the
      process stopping), the worker and whatever it started are killed (SIGKILL to its process
      group) and a new one is started in its place.
    - Each worker has its own limits: memory (a MemoryError, or the kill, is reported as such and
      the worker replaced) and CPU time per call (the kernel stops it with SIGXCPU).
    - A worker's environment holds no secret: PATH, HOME, the locale, the temporary folder and the
      names in `env`; it imports the tools' modules from this process's `sys.path`. A new worker
      imports the modules of the tools the pool ran before it says it is ready, so a replacement
      does not spend its first call's time limit importing them (a pool's very first call does).
    - `aclose` kills every worker and waits for them (bounded): nothing outlives the container.

    Args:
        config: The pool's size and the workers' limits.
    """

    def __init__(self, config: ProcessPoolConfig | None = None) -> None:
        self._config = config or ProcessPoolConfig()
        self._idle: list[WorkerProcess] = []
        self._workers: set[WorkerProcess] = set()  # ready, or busy: the pool's size counts them
        self._living: set[WorkerProcess] = set()  # every process started and not yet reaped
        self._starting = 0
        self._waiters: deque[asyncio.Future[WorkerProcess]] = deque()
        self._spawns: set[asyncio.Task[None]] = set()
        self._modules: dict[str, None] = {}  # the tools' modules called so far, in order
        self._closed = False

    @property
    def processes(self) -> list[int]:
        """The pids of the live workers (for tests and benchmarks)."""
        return sorted(worker.pid for worker in self._workers if worker.alive)

    async def warm(self, count: int | None = None) -> None:
        """Start workers until `count` (default: the pool's size) are ready; what the first calls would wait for."""
        wanted = min(count or self._config.size, self._config.size)
        taken = await asyncio.gather(*(self._take() for _ in range(wanted)))
        for worker in taken:
            self._give_back(worker)

    async def call(self, target: FunctionRef, kwargs: dict[str, Any], *, timeout_s: float) -> Any:
        """`target(**kwargs)` in a worker process (see the class's rules)."""
        cpu_s = self._config.cpu_s or timeout_s
        try:
            request = encode_frame((target.module, target.qualname, cpu_s, kwargs))
        except Exception as exc:
            raise ToolError(f"the call's arguments cannot be sent to its worker process: {exc}") from None
        self._modules.setdefault(target.module)
        worker = await self._take()
        try:
            async with asyncio.timeout(timeout_s):
                payload = await worker.ask(request)
        except TimeoutError:
            self._lose(worker)
            raise ToolStopped(f"over its time limit ({timeout_s:g} s)", timed_out=True) from None
        except asyncio.CancelledError:
            self._lose(worker)  # the run was cancelled, or the process is stopping: the call stops too
            raise
        except WorkerDied:
            self._lose(worker)
            returncode = await asyncio.shield(worker.gone)
            raise ToolStopped(why_it_ended(returncode, cpu_s=cpu_s, memory_mb=self._config.memory_mb)) from None
        try:
            reply = pickle.loads(payload)  # noqa: S301 - from our worker, over its own pipe
        except Exception as exc:
            self._give_back(worker)
            raise ToolError(f"the tool's result cannot be read back from its worker process: {exc}") from None
        kind = reply[0]
        if kind == "memory":
            self._lose(worker)  # it exits by itself; a new one takes its place
            limit = f" ({self._config.memory_mb} MB)" if self._config.memory_mb else ""
            raise ToolStopped(f"it went over its memory limit{limit}; its process was replaced")
        self._give_back(worker)
        if kind == "ok":
            return reply[1]
        if kind == "tool_error":
            raise ToolError(reply[1])
        raise ToolRaised(reply[1], reply[2])

    async def aclose(self) -> None:
        """Kill every worker and wait (a few seconds at most) until each is reaped."""
        self._closed = True
        for spawn in list(self._spawns):
            spawn.cancel()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(ToolStopped("the process pool was closed"))
        await asyncio.gather(*self._spawns, return_exceptions=True)
        living = list(self._living)  # those being killed for their calls too: none is left a zombie
        for worker in living:
            worker.kill()
        if living:
            _, pending = await asyncio.wait([worker.gone for worker in living], timeout=_CLOSE_TIMEOUT_S)
            if pending:
                logger.warning("tool_processes_not_reaped", pids=[w.pid for w in living if not w.gone.done()])
        self._idle.clear()

    async def _take(self) -> WorkerProcess:
        """A ready worker: an idle one, a new one (below the pool's size), or the next one given back."""
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
        if self._closed:
            raise ToolStopped("the process pool was closed")
        waiter: asyncio.Future[WorkerProcess] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        if len(self._workers) + self._starting < self._config.size:
            self._spawn()
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._give_back(waiter.result())  # handed one just as the caller was cancelled
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def _give_back(self, worker: WorkerProcess) -> None:
        """A worker is free: to the first caller waiting, else to the idle ones."""
        if not worker.alive:
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self._idle.append(worker)

    def _lose(self, worker: WorkerProcess) -> None:
        """Kill a worker whose call must stop (or that went bad); another one is started in its place."""
        worker.kill()
        self._workers.discard(worker)
        if not self._closed:
            self._spawn()

    def _gone(self, worker: WorkerProcess) -> None:
        """A worker ended and was reaped (killed here, or by something else): the pool forgets it."""
        self._workers.discard(worker)
        self._living.discard(worker)
        if worker in self._idle:
            self._idle.remove(worker)

    def _spawn(self) -> None:
        self._starting += 1
        task = asyncio.ensure_future(self._start_one())
        self._spawns.add(task)
        task.add_done_callback(self._spawns.discard)

    async def _start_one(self) -> None:
        try:
            worker = WorkerProcess.launch(self._environment(), self._gone)
            self._living.add(worker)
            await asyncio.wait_for(worker.handshake(self._hello()), _START_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # the callers waiting would wait forever: they get the reason instead (the next call tries again)
            why = str(exc) or type(exc).__name__
            logger.error("tool_process_start_failed", error=why)
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_exception(ToolStopped(f"its worker process could not start: {why}"))
            return
        finally:
            self._starting -= 1
        if self._closed:
            worker.kill()
            return
        self._workers.add(worker)
        self._give_back(worker)

    def _hello(self) -> dict[str, Any]:
        memory_mb = self._config.memory_mb
        return {
            # where this process finds the tools' modules ("" is its working folder, the worker's too)
            "sys_path": [path or os.getcwd() for path in sys.path],
            "memory_bytes": memory_mb * 1024 * 1024 if memory_mb else 0,
            "parent": os.getpid(),
            "preload": list(self._modules),
        }

    def _environment(self) -> dict[str, str]:
        kept = {*_HARMLESS, *self._config.env}
        return {name: value for name, value in os.environ.items() if name in kept or name.startswith("LC_")}
