"""Redis RunEvents: run ends and cancels on pub/sub channels, heard by every process of the service."""

import asyncio
import contextlib

import structlog
from redis.asyncio import Redis

from agentkit.adapters.waiters import LocalDelivery
from agentkit.application.backoff import Backoff
from agentkit.application.ports.run_events import RunEvents
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run

logger = structlog.get_logger(__name__)

# How long one read of the subscription blocks: short, so a stop is noticed soon.
_READ_S = 1.0


class RedisRunEvents(LocalDelivery, RunEvents):
    """Publishes a run's id on `{prefix}run-ended`, `{prefix}run-cancel` or `{prefix}run-followed`; one
    subscription per process.

    Pub/sub delivers to whoever listens at the moment and keeps nothing, which suits both uses:
    waiters read the run again every few seconds anyway (`application.runs.waiting.REREAD_S`), and
    a cancel is stored on the run, where the executor's lease renewal finds it. A subscription that
    breaks (Redis restarted) is opened again with backoff, and waiters are woken to read the run,
    since an end may have been missed meanwhile.

    Args:
        redis: The service's Redis client (the subscription takes a connection of its own).
        prefix: The key prefix of this deployment (REDIS_KEY_PREFIX).
    """

    def __init__(self, redis: Redis, *, prefix: str = "agentkit:") -> None:
        super().__init__()
        self._redis = redis
        self._ended_channel = f"{prefix}run-ended"
        self._cancel_channel = f"{prefix}run-cancel"
        self._follow_channel = f"{prefix}run-followed"
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._backoff = Backoff(first_s=0.1, cap_s=2.0)
        self._unpublished = 0  # events not published since the last one that was

    async def start(self) -> None:
        """Subscribe in the background; returns once subscribed (or after a moment, if Redis is down)."""
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="agentkit-run-events")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2.0):
                await self._subscribed.wait()

    async def aclose(self) -> None:
        """Unsubscribe."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def publish_ended(self, run: Run) -> None:
        """Publish the run's end; its waiters in this process hear at once, with the run."""
        self._waiters.ended(run.id, run)
        await self._publish(self._ended_channel, run.id)

    async def publish_cancel(self, run_id: RunId) -> None:
        """Publish the cancel; this process's handlers hear it at once."""
        self._waiters.cancelled(run_id)
        await self._publish(self._cancel_channel, run_id)

    async def publish_followed(self, run_id: RunId) -> None:
        """Publish that a client follows the run; this process's handlers hear it at once."""
        self._waiters.followed(run_id)
        await self._publish(self._follow_channel, run_id)

    async def _publish(self, channel: str, run_id: RunId) -> None:
        try:
            await self._redis.publish(channel, run_id)
        except Exception as exc:
            # the store holds the truth: waiters re-read, the executor's renewal brings the cancel;
            # an outage is logged once, not once per run
            self._unpublished += 1
            if self._unpublished == 1:
                logger.warning("run_events_not_published", channel=channel, error=str(exc))
            return
        if self._unpublished:
            logger.info("run_events_published_again", missed=self._unpublished)
            self._unpublished = 0

    async def _listen(self) -> None:
        failures = 0
        while True:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._ended_channel, self._cancel_channel, self._follow_channel)
                self._subscribed.set()
                if failures:
                    logger.info("run_events_resubscribed", failures=failures)
                    self._waiters.wake_all()  # ends may have been published while we were away
                failures = 0
                while True:
                    message = await pubsub.get_message(timeout=_READ_S)
                    if message is not None:
                        self._deliver(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                if failures == 1:  # once per outage; the recovery is logged too
                    logger.warning("run_events_subscription_lost", error=str(exc))
                await asyncio.sleep(self._backoff.delay(failures))
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _deliver(self, message: dict[str, object]) -> None:
        data, channel = message.get("data"), message.get("channel")
        if not isinstance(data, bytes | str) or not isinstance(channel, bytes | str):
            return
        run_id = RunId(data.decode() if isinstance(data, bytes) else data)
        name = channel.decode() if isinstance(channel, bytes) else channel
        if name == self._ended_channel:
            self._waiters.ended(run_id)
        elif name == self._cancel_channel:
            self._waiters.cancelled(run_id)
        elif name == self._follow_channel:
            self._waiters.followed(run_id)
