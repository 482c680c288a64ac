"""StepPipeline: each step and stored run recorded once by the run, delivered off its path in batches."""

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Sequence
from typing import Final

import msgspec
import structlog

from agentkit.application.pipeline.entries import DeltaEntry, Entry, RunEntry, StepEntry
from agentkit.application.pipeline.fragments import Fragments
from agentkit.application.pipeline.guard import FragmentGuard
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.pipeline.stored import stored_delta, stored_step
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.domain.run import Run
from agentkit.domain.steps import Step

logger = structlog.get_logger(__name__)

MAX_QUEUED: Final = 10_000
MAX_BATCH: Final = 500
FRAGMENT_WINDOW_S: Final = 0.002
"""After a batch that carried fragments, the writer lets the next ones gather this long: a model's tokens
come a few milliseconds apart, and one event for a window's worth costs what one token's would."""


class StepPipeline:
    """One per process: runs put steps (and the repository stored runs) in; one writer delivers them.

    Rules:
    - `put` never waits and never does more than append: the stored form of a step (redaction,
      digests of the messages its LLM call sent first) is made by the writer, in its batches, once
      for every consumer.
    - Consumers, in this order for each entry: the durable trace (`trace`), the step observers (a
      terminal printer), the run observers (the run event log, webhooks, metrics, spans). Entries
      reach them in the order they were put; a consumer that raises is logged and the others still
      hear. A step the durable trace refuses is counted on its run (`TraceHealth.gaps`): that run
      cannot claim success.
    - Bounded: past `max_queued` undelivered entries `put` says so and the run awaits `room()`, which
      delivers (or waits for the writer) until the queue is below the bound; a durable trace whose
      own backlog passes the bound is waited for. A full queue slows runs; it never drops a step.
    - `flush()` returns once everything put before it reached every consumer and the durable trace
      holds it: what a run must have stored before it goes on (the call record before a
      non-idempotent tool, its final status). The caller delivers what is queued itself rather than
      wait for the writer to be scheduled, so a flush costs no task switch.
    - The writer is woken by the first entry after a pause: in a busy process the steps of many runs
      share a batch.
    """

    def __init__(
        self,
        *,
        trace: TraceSink,
        policy: PromptPolicy | None = None,
        step_observers: Sequence[TraceSink] = (),
        run_observers: RunObserver | None = None,
        max_queued: int = MAX_QUEUED,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self.trace = trace
        self.policy = policy or PromptPolicy()
        self._guard = FragmentGuard(self.policy)
        self._step_observers = tuple(step_observers)
        self._run_observers = run_observers
        self._max_queued = max_queued
        self._max_batch = max_batch
        self._queue: deque[Entry] = deque()
        self._put = 0  # entries ever put
        self._done = 0  # entries delivered to every consumer
        self._busy = False  # a batch is being delivered (by the writer or a flushing run)
        self._waiters: list[asyncio.Future[None]] = []
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._fragments_went = False  # the last batch delivered carried fragments

    @property
    def observes_runs(self) -> bool:
        """Whether anyone hears of stored runs (else the repository need not put them)."""
        return self._run_observers is not None

    @property
    def queued(self) -> int:
        """Entries put and not yet delivered."""
        return self._put - self._done

    def put(self, entry: Entry) -> bool:
        """Queue the entry for delivery; False when the queue is at its bound (the caller awaits `room()`)."""
        queue = self._queue
        queue.append(entry)
        self._put += 1
        wake = self._wake
        if wake is None:
            self._start()
        elif not wake.is_set():
            wake.set()
        return len(queue) < self._max_queued

    def put_delta(self, entry: DeltaEntry) -> bool:
        """Queue a fragment for the run observers (dropped at once when there are none: nobody could follow it)."""
        if self._run_observers is None:
            return True
        return self.put(entry)

    def put_run(self, run: Run) -> None:
        """Queue a stored run for the run observers (with the storing code's context: a request's trace)."""
        if self._run_observers is not None:
            self.put(RunEntry(run, contextvars.copy_context()))

    async def room(self) -> None:
        """Return once the queue is below its bound, and the durable trace's backlog too (delivering meanwhile)."""
        while len(self._queue) >= self._max_queued:
            await self._deliver_until(self._put - len(self._queue) + 1)
        await self._unclogged()

    async def deliver(self) -> None:
        """Return once everything put so far reached every consumer (not necessarily stored yet).

        Delivering is the writer's CPU work (the stored form, the hand-over to each consumer); the
        caller does it itself when the writer is not at it, and waits on no store.
        """
        if self._done < self._put:
            await self._deliver_until(self._put)

    def flushed(self) -> bool:
        """Whether everything put so far reached its consumers and is stored (a cheap check)."""
        return self._done == self._put and self.trace.flushed()

    async def flush(self) -> None:
        """Return once everything put so far reached every consumer and the durable trace holds it.

        While the durable store is down this waits: the caller bounds it.
        """
        await self.deliver()
        if not self.trace.flushed():
            await self.trace.flush()

    async def flush_observers(self) -> None:
        """Let the step observers finish what they were given; their failures are logged."""
        for sink in self._step_observers:
            try:
                await sink.flush()
            except Exception as exc:
                logger.warning("trace_flush_failed", sink=type(sink).__name__, error=str(exc))

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """Deliver what is queued (for at most `timeout_s`), then stop the writer."""
        try:
            async with asyncio.timeout(timeout_s):
                await self._deliver_until(self._put)
        except TimeoutError:
            logger.error("pipeline_entries_abandoned", entries=self.queued, waited_s=timeout_s)
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
            self._wake = None

    def _start(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop yet: the next put (or a flush) delivers
            return
        self._wake = asyncio.Event()
        self._wake.set()
        # a context of its own: the first putter's (a request's log bindings) is not the writer's
        self._writer = loop.create_task(self._write(), name="agentkit-step-pipeline", context=contextvars.Context())

    async def _write(self) -> None:
        wake = self._wake
        assert wake is not None  # noqa: S101 - set before the task starts
        while True:
            await wake.wait()
            wake.clear()
            try:
                await self._deliver_until(self._put)
                await self._unclogged()
            except Exception:  # a consumer's failure is handled per entry; this is a bug: keep delivering
                logger.exception("pipeline_writer_failed")
            if self._fragments_went:
                # a model is streaming: the first fragment went at once, the next gather for a moment
                self._fragments_went = False
                await asyncio.sleep(FRAGMENT_WINDOW_S)

    async def _unclogged(self) -> None:
        """Wait while the durable trace's backlog is past the bound: a lagging store slows runs, never loses steps."""
        if self.trace.backlog() > self._max_queued:
            await self.trace.flush()

    async def _deliver_until(self, target: int) -> None:
        """Deliver entries in order until `target` were delivered (waiting while someone else delivers)."""
        while self._done < target:
            if self._busy:
                await self._settled()
                continue
            self._busy = True
            try:
                await self._deliver_batch()
            finally:
                self._busy = False
                self._notify()

    async def _deliver_batch(self) -> None:
        """Take a batch off the queue and hand it to every consumer: one call each for the trace sinks."""
        queue = self._queue
        batch = [queue.popleft() for _ in range(min(len(queue), self._max_batch))]
        try:
            stored = [self._stored(entry) if type(entry) is StepEntry else None for entry in batch]
            steps = [step for step in stored if step is not None]
            if steps:
                await self._to_sinks(batch, steps)
            observers = self._run_observers
            if observers is not None:
                fragments: Fragments | None = None  # a run of fragments of one part, joined into one event
                for entry, step in zip(batch, stored, strict=True):
                    if type(entry) is DeltaEntry:
                        if fragments is None or not fragments.take(entry):
                            if fragments is not None:
                                self._deliver_fragments(fragments, observers)
                            fragments = Fragments(entry)
                        continue
                    if fragments is not None:
                        self._deliver_fragments(fragments, observers)
                        fragments = None
                    if step is not None:
                        observers.on_step(step)
                        self._guard.step_logged(step.run_id, step.step_no)
                    else:
                        assert isinstance(entry, RunEntry)  # noqa: S101 - the other entries are handled above
                        entry.context.run(observers.on_run, entry.run)
                if fragments is not None:
                    self._deliver_fragments(fragments, observers)
                    self._fragments_went = True
        finally:
            # counted once handed over, whatever happened: a batch is never delivered twice (an
            # observer cut off by a cancel, say, misses those steps; the durable trace had them first)
            self._done += len(batch)

    def _deliver_fragments(self, fragments: Fragments, observers: RunObserver) -> None:
        """The joined fragments to the observers, as the prompt policy lets them go (see FragmentGuard)."""
        event = fragments.event()
        guard = self._guard
        admitted = event if guard.passes_all else guard.admit(fragments.run_id, event)
        if admitted is not None:
            observers.on_delta(fragments.run_id, admitted)

    async def _to_sinks(self, batch: list[Entry], steps: list[Step]) -> None:
        trace = self.trace
        if _takes_batches(trace):
            try:
                await trace.record_batch(steps)
            except Exception as exc:  # none of them is taken as stored: each run counts its own
                for entry in batch:
                    if type(entry) is StepEntry:
                        entry.health.gaps += 1
                _log_refusal(trace, steps[0], exc, steps=len(steps))
        else:  # a sink with only `record`: step by step, so one refused step costs no other
            healths = [entry.health for entry in batch if type(entry) is StepEntry]
            for step, health in zip(steps, healths, strict=True):
                try:
                    await trace.record(step)
                except Exception as exc:
                    health.gaps += 1  # the durable trace lacks this step: its run cannot claim success
                    _log_refusal(trace, step, exc)
        for sink in self._step_observers:
            if _takes_batches(sink):
                try:
                    await sink.record_batch(steps)
                except Exception as exc:
                    _log_refusal(sink, steps[0], exc, steps=len(steps))
                continue
            for step in steps:
                try:
                    await sink.record(step)
                except Exception as exc:
                    _log_refusal(sink, step, exc)

    def _stored(self, entry: StepEntry) -> Step:
        """The step as the trace keeps it: redacted under the policy, with the stored form of what it sent first."""
        step = entry.step
        policy = self.policy
        if policy.changes_anything:
            step = stored_step(step, policy)
            if step.redacted:
                entry.health.redacted = True
        if entry.sent is not None:
            step = msgspec.structs.replace(step, sent=stored_delta(entry.sent, policy))
        return step

    async def _settled(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _notify(self) -> None:
        # a batch was delivered and nobody delivers now: each waiter finds its target reached, or delivers on
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def _takes_batches(sink: TraceSink) -> bool:
    """Whether the sink records a batch in one call (else the pipeline hands it the steps one by one)."""
    return type(sink).record_batch is not TraceSink.record_batch


def _log_refusal(sink: TraceSink, step: Step, exc: Exception, **extra: int) -> None:
    logger.warning(
        "trace_write_failed",
        run_id=step.run_id,
        step_no=step.step_no,
        sink=type(sink).__name__,
        error=str(exc)[:300],
        **extra,
    )
