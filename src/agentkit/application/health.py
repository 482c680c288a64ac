"""CheckHealth: the state of each dependency."""

import asyncio
from collections.abc import Sequence

import msgspec
import structlog

from agentkit.application.ports.health_probe import HealthProbe

logger = structlog.get_logger(__name__)


class HealthReport(msgspec.Struct, frozen=True, kw_only=True):
    """Overall health and each dependency's state (`ok` or `down`)."""

    healthy: bool
    checks: dict[str, str]


class CheckHealth:
    """Probe every dependency at once, each within `timeout_s`; healthy only if all answer."""

    def __init__(self, *, probes: Sequence[HealthProbe], timeout_s: float = 2.0) -> None:
        self._probes = probes
        self._timeout_s = timeout_s

    async def execute(self) -> HealthReport:
        """Run the probes."""
        results = await asyncio.gather(*(self._probe(probe) for probe in self._probes))
        checks = {probe.name: "ok" if ok else "down" for probe, ok in zip(self._probes, results, strict=True)}
        return HealthReport(healthy=all(results), checks=checks)

    async def _probe(self, probe: HealthProbe) -> bool:
        try:
            async with asyncio.timeout(self._timeout_s):
                await probe.check()
        except Exception as exc:
            logger.warning("health_check_failed", dependency=probe.name, error=str(exc) or type(exc).__name__)
            return False
        return True
