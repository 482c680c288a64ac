"""CheckHealth: the state of each dependency, answered within a bound whatever the dependency does."""

import asyncio
import time
from collections.abc import Sequence
from typing import NewType

import msgspec
import structlog

from agentkit.application.ports.health_probe import HealthProbe, NotReady

logger = structlog.get_logger(__name__)

HealthProbes = NewType("HealthProbes", tuple[HealthProbe, ...])


class HealthReport(msgspec.Struct, frozen=True, kw_only=True):
    """Overall health and each dependency's state: `ok`, `down`, or why one that answers is not ready
    (`schema_behind`)."""

    healthy: bool
    checks: dict[str, str]


class CheckHealth:
    """Probe every dependency at once; healthy only if all answer within `timeout_s`, and are ready.

    Rules:
    - The answer comes within `timeout_s`, also when a dependency hangs (a frozen server): each
      probe runs as a task of its own and is waited for, not awaited to its end, so a probe whose
      clean-up hangs too (closing a connection to a frozen server) cannot hold the answer back.
    - Checks that overlap share one probe per dependency (a load balancer polling every instance
      every second, or a burst of /health calls, cost one round trip, not one each). A probe still
      running after `timeout_s` is not joined: it is cancelled and a fresh one started.
    """

    def __init__(self, *, probes: Sequence[HealthProbe], timeout_s: float = 2.0) -> None:
        self._probes = probes
        self._timeout_s = timeout_s
        self._running: dict[str, tuple[float, asyncio.Task[None]]] = {}

    async def execute(self) -> HealthReport:
        """Run the probes (or join those running) and report."""
        tasks = [self._probe(probe) for probe in self._probes]
        if tasks:
            await asyncio.wait(tasks, timeout=self._timeout_s)
        checks = {probe.name: self._state(probe, task) for probe, task in zip(self._probes, tasks, strict=True)}
        return HealthReport(healthy=all(state == "ok" for state in checks.values()), checks=checks)

    def _state(self, probe: HealthProbe, task: asyncio.Task[None]) -> str:
        if not task.done():
            error = f"no answer in {self._timeout_s:g} s"
            logger.warning("health_check_failed", dependency=probe.name, error=error)
            return "down"
        if task.cancelled():
            return "down"
        exc = task.exception()
        if exc is None:
            return "ok"
        return exc.state if isinstance(exc, NotReady) else "down"

    def _probe(self, probe: HealthProbe) -> asyncio.Task[None]:
        now = time.monotonic()
        running = self._running.get(probe.name)
        if running is not None:
            started, task = running
            if not task.done() and now - started < self._timeout_s:
                return task
            task.cancel()  # stuck past its bound: not waited for (its clean-up may hang as well)
        task = asyncio.create_task(probe.check(), name=f"agentkit-health-{probe.name}")
        task.add_done_callback(lambda done: self._finished(probe, done))
        self._running[probe.name] = (now, task)
        return task

    def _finished(self, probe: HealthProbe, task: asyncio.Task[None]) -> None:
        if self._running.get(probe.name, (0.0, None))[1] is task:
            del self._running[probe.name]
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here, so a probe no caller waited for does not warn at exit
        if isinstance(exc, NotReady):
            logger.warning("health_check_not_ready", dependency=probe.name, state=exc.state)
        elif exc is not None:
            logger.warning("health_check_failed", dependency=probe.name, error=str(exc) or type(exc).__name__)
