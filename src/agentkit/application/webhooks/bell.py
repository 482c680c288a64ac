"""DeliveryBell: word, within one process, that a delivery was stored and can be sent now."""

import asyncio
import contextlib


class DeliveryBell:
    """The notifier rings it when it stored a delivery; the sender waits on it between passes.

    Deliveries stored by other processes are found by the sender's periodic pass instead.
    """

    def __init__(self) -> None:
        self._rung = asyncio.Event()

    def ring(self) -> None:
        """Wake the sender."""
        self._rung.set()

    async def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for a ring; whether one came (it is consumed)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(timeout_s, 0.0)):
                await self._rung.wait()
        rung = self._rung.is_set()
        self._rung.clear()
        return rung
