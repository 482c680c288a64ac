"""/health's checks answer within their bound, whatever a dependency does, and share a probe when they overlap."""

import asyncio

from agentkit.application.health import CheckHealth
from agentkit.application.ports.health_probe import HealthProbe, NotReady


class HungProbe(HealthProbe):
    """A dependency that never answers, and whose clean-up hangs too (a connection to a frozen server)."""

    def __init__(self, name: str = "postgres") -> None:
        self.name = name
        self.calls = 0
        self.cancelled = 0
        self.never = asyncio.Event()

    async def check(self) -> None:
        """Hang; when cancelled, hang in the clean-up."""
        self.calls += 1
        try:
            await self.never.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            await self.never.wait()  # closing the connection hangs as well
            raise


class GatedProbe(HealthProbe):
    """A dependency that answers when the test opens the gate."""

    def __init__(self, name: str = "redis") -> None:
        self.name = name
        self.calls = 0
        self.gate = asyncio.Event()

    async def check(self) -> None:
        """Wait for the gate, then answer."""
        self.calls += 1
        await self.gate.wait()


class NotReadyProbe(HealthProbe):
    """A database that answers, with a schema the code does not match."""

    name = "postgres"

    async def check(self) -> None:
        """Answer: not ready."""
        raise NotReady("schema_behind")


class FailingProbe(HealthProbe):
    """A dependency that refuses the connection."""

    name = "redis"

    async def check(self) -> None:
        """Fail."""
        raise ConnectionRefusedError(111, "refused")


async def test_a_dependency_that_answers_but_is_not_ready_is_reported_by_its_reason() -> None:
    check = CheckHealth(probes=[NotReadyProbe(), FailingProbe()], timeout_s=30)

    report = await check.execute()

    assert not report.healthy
    assert report.checks == {"postgres": "schema_behind", "redis": "down"}


async def test_a_hung_dependency_is_reported_down_within_the_bound() -> None:
    hung, fine = HungProbe(), GatedProbe()
    fine.gate.set()
    check = CheckHealth(probes=[hung, fine], timeout_s=0.2)

    report = await asyncio.wait_for(check.execute(), 30)  # returns, though the probe never ends

    assert not report.healthy
    assert report.checks == {"postgres": "down", "redis": "ok"}
    hung.never.set()


async def test_overlapping_checks_share_one_probe_per_dependency() -> None:
    probe = GatedProbe()
    check = CheckHealth(probes=[probe], timeout_s=30)

    first = asyncio.create_task(check.execute())
    second = asyncio.create_task(check.execute())
    await asyncio.sleep(0.01)
    probe.gate.set()
    reports = await asyncio.wait_for(asyncio.gather(first, second), 30)

    assert probe.calls == 1
    assert all(report.healthy for report in reports)


async def test_a_probe_stuck_past_its_bound_is_cancelled_and_replaced() -> None:
    probe = HungProbe()
    check = CheckHealth(probes=[probe], timeout_s=0.05)

    await check.execute()
    await check.execute()  # the first probe is past its bound: not joined

    assert probe.calls == 2
    assert probe.cancelled == 1
    probe.never.set()
