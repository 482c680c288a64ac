"""What seeing everything costs the loop: prompts captured, OpenTelemetry spans, prices and Prometheus metrics.

The loop of `bench/loop_overhead.py` (the scripted LLM, an async no-op tool, the in-memory
adapters; a turn is one LLM call that asks for one tool call, then that tool call: two trace
steps), run in these configurations:

- `off`: no prompt capture, no prices, no observers; the steps are still checked for secrets
  (two configured), as the service always does (the figures before this bench had the same `off`);
- `off, no secrets`: nor that (the loop as it was before issue 13);
- `prompts`: each LLM call's prompt reference, its new messages digested and checked for secrets,
  as the service always does;
- `prompts + otel`: and the OpenTelemetry observer, every run traced, spans batched to an
  exporter that drops them (what the collector does with them is not the loop's cost): the
  configuration of the aim;
- `prompts + otel 10%`: the same with a 10 % trace-id ratio sampler (OTEL_TRACES_SAMPLER=
  parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.1): the other runs make no spans;
- `everything`: `prompts + otel` plus each call priced from genai-prices' table and the
  Prometheus observer (the run repository observed, every step counted);
- `events`: `off` plus the live event feed (GET /v1/runs/{id}/events), which the service always
  runs, on the in-memory log: the run repository observed, every status change and step appended;
- `events redis`: the same on the Redis log (a stream per run, written by its writer task on the
  same event loop, drained inside the timed span), when REDIS_URL is set.

Every configuration and the hand-written loop of loop_overhead.py (the baseline) are timed in
each round, in an order that rotates from round to round. A configuration's time includes
whatever work it left for later (the trace sinks and observers are flushed, and the span
processor's queue drained, inside the timed span), so nothing is measured as saved that was only
moved. "own" is a time minus the baseline's; "added" is a configuration's time minus `off`'s in the
same round, and "of own" that against `off`'s own time in the same round. Medians over the rounds
are reported with the lowest and highest round, since these machines are noisy.

Run: `.venv/bin/python bench/observability_overhead.py [--quick] [--rounds N]` (with REDIS_URL for `events redis`).
"""

import argparse
import asyncio
import gc
import logging
import os
import secrets
import statistics
import sys
import time
from collections.abc import Sequence

import structlog
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunEventLog,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.metrics import PrometheusMetrics
from agentkit.adapters.otel import OTelRunObserver
from agentkit.adapters.pricing import GenAIPriceTable
from agentkit.adapters.redis import RedisRunEventLog, create_redis
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.observation import ObservedRunRepository, RunEventFeed, RunObservers
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.run_event_log import RunEventLog
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import ToolRegistry
from agentkit.domain.ids import OwnerId
from agentkit.domain.run import RunStatus
from loop_overhead import GOAL, baseline_run, noop
from loop_overhead import Cycling as LoopCycling

SECRETS = ("sk-a-secret-key-of-the-provider", "an-api-key-0123")
# name: (secrets, prompts, otel: None / "all" / "10%", prices and metrics, event log: None / its name)
CONFIGS: dict[str, tuple[bool, bool, str | None, bool, str | None]] = {
    "off, no secrets": (False, False, None, False, None),
    "off": (True, False, None, False, None),
    "prompts": (True, True, None, False, None),
    "prompts + otel": (True, True, "all", False, None),
    "prompts + otel 10%": (True, True, "10%", False, None),
    "everything": (True, True, "all", True, None),
    "events": (True, False, None, False, "memory"),
}


class DropSpans(SpanExporter):
    """An exporter that takes every batch and keeps nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Drop them."""
        return SpanExportResult.SUCCESS


class Tracing:
    """Two tracer providers (every run; 10 % of runs), each batching to an exporter that drops spans."""

    def __init__(self) -> None:
        self.providers = {
            "all": TracerProvider(),
            "10%": TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.1))),
        }
        for provider in self.providers.values():
            provider.add_span_processor(BatchSpanProcessor(DropSpans(), max_queue_size=100_000))
        self.observers = {
            name: OTelRunObserver(provider.get_tracer("bench")) for name, provider in self.providers.items()
        }

    def drain(self) -> None:
        """Export what the processors hold (the batch thread's work, counted in the caller's time)."""
        for provider in self.providers.values():
            provider.force_flush()

    def shutdown(self) -> None:
        """Stop the processors."""
        for provider in self.providers.values():
            provider.shutdown()


class Cycling(LoopCycling):
    """The loop bench's cycling model, named as a priced one (the price table knows gpt-4o-mini)."""

    @property
    def provider(self) -> str:
        """A provider the price table knows."""
        return "openai"

    @property
    def model(self) -> str:
        """A model the price table knows."""
        return "gpt-4o-mini"


class Runtime:
    """The real loop in one of the configurations, serving run after run as one process does."""

    def __init__(self, turns: int, config: str, tracing: Tracing, logs: dict[str, RunEventLog]) -> None:
        with_secrets, prompts, otel, priced, events = CONFIGS[config]
        clock = FixedClock()
        # its state in memory keeps the last few runs only, as the PostgreSQL sink's steps leave the
        # process (the in-memory one would otherwise keep every run's steps for the collector to walk)
        runs = InMemoryRunRepository(max_finished=10)
        llm = Cycling(turns)
        max_steps = turns + 1
        observers: list[RunObserver] = []
        if priced:
            observers.append(PrometheusMetrics())
        if otel is not None:
            observers.append(tracing.observers[otel])
        if events is not None:
            observers.append(RunEventFeed(logs[events]))
        policy = PromptPolicy(capture=prompts, secrets=SECRETS if with_secrets else ())
        self.trace = InMemoryTraceSink()
        runs.on_forget(self.trace.forget)
        self.pipeline = StepPipeline(
            trace=self.trace, policy=policy, run_observers=RunObservers(observers) if observers else None
        )
        repository = ObservedRunRepository(runs, self.pipeline) if observers else runs
        loop = AgentLoop(
            memory_loop_deps(
                llm,
                ToolRegistry([noop]),
                runs=repository,
                sessions=InMemorySessionStore(clock),
                clock=clock,
                config=AgentConfig(),
                pipeline=self.pipeline,
                prices=GenAIPriceTable() if priced else None,
            )
        )
        create = CreateRun(
            runs=repository, clock=clock, ids=SequentialIdGenerator(), max_steps=max_steps, max_goal_chars=10_000
        )
        self.agent = RunAgent(create=create, loop=loop)

    async def run(self) -> RunStatus:
        run = await self.agent.execute(CreateRunInput(owner=OwnerId("bench"), goal=GOAL))
        return run.status

    async def drain(self) -> None:
        """Whatever the pipeline and the sinks hold back, done now; the writer stopped."""
        await self.pipeline.flush()
        await self.pipeline.aclose()


async def one_round(
    turns: int, runs_per_round: int, order: Sequence[str], tracing: Tracing, logs: dict[str, RunEventLog]
) -> dict[str, float]:
    """µs per turn of each configuration and of the baseline, in `order`."""
    times: dict[str, float] = {}
    for name in order:
        if name == "baseline":
            llm = Cycling(turns)
            gc.collect()
            started = time.process_time()
            for _ in range(runs_per_round):
                await baseline_run(llm, [noop.schema])
            times[name] = (time.process_time() - started) / (runs_per_round * turns) * 1e6
            continue
        runtime = Runtime(turns, name, tracing, logs)
        tracing.drain()
        gc.collect()
        started = time.process_time()
        for _ in range(runs_per_round):
            status = await runtime.run()
        await runtime.drain()
        tracing.drain()
        events = CONFIGS[name][4]
        if events is not None:
            await logs[events].aclose()  # the writer's work counts: what it queued is sent
        times[name] = (time.process_time() - started) / (runs_per_round * turns) * 1e6
        assert status is RunStatus.SUCCEEDED, status
    return times


def spread(values: list[float], scale: float = 1.0, unit: str = "us") -> str:
    """Median [lowest, highest]."""
    if unit == "%":
        return f"{statistics.median(values):5.0%} [{min(values):4.0%}, {max(values):4.0%}]"
    return f"{statistics.median(values) * scale:6.1f} [{min(values):5.1f}, {max(values):5.1f}]"


async def main(quick: bool, rounds: int | None) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    tracing = Tracing()
    logs: dict[str, RunEventLog] = {"memory": InMemoryRunEventLog(max_len=100, max_runs=100)}
    redis = None
    if os.environ.get("REDIS_URL"):
        redis = create_redis(os.environ["REDIS_URL"])
        prefix = f"agentkit-bench:{secrets.token_hex(4)}:"
        logs["redis"] = RedisRunEventLog(redis, prefix=prefix, max_len=100, ttl_s=60)
        CONFIGS["events redis"] = (True, False, None, False, "redis")
    rounds = rounds or (3 if quick else 30)
    runs_per_round = 30 if quick else 60
    names = [*CONFIGS, "baseline"]
    await one_round(10, 20, names, tracing, logs)  # warm-up
    samples: list[dict[str, float]] = []
    for index in range(rounds):
        order = names[index % len(names) :] + names[: index % len(names)]
        samples.append(await one_round(20, runs_per_round, order, tracing, logs))
    tracing.shutdown()
    if redis is not None:
        keys = [key async for key in redis.scan_iter(match=f"{prefix}*")]
        for start in range(0, len(keys), 500):
            await redis.delete(*keys[start : start + 500])
        await redis.aclose()
    print(
        f"Python {sys.version.split()[0]}; {rounds} rounds of {runs_per_round} 20-turn runs per configuration; "
        "one turn = one LLM call + one tool call (2 trace steps); median [lowest, highest round]"
    )
    print(f"{'configuration':20}{'per turn, us':>22}{'own, us':>22}{'added, us':>22}{'of off own':>20}")
    base = [s["baseline"] for s in samples]
    print(f"{'baseline':20}{spread(base):>22}")
    for name in CONFIGS:
        per_turn = [s[name] for s in samples]
        own = [s[name] - s["baseline"] for s in samples]
        added = [s[name] - s["off"] for s in samples]
        ratio = [(s[name] - s["off"]) / (s["off"] - s["baseline"]) for s in samples]
        row = f"{name:20}{spread(per_turn):>22}{spread(own):>22}"
        if name != "off":
            row += f"{spread(added):>22}{spread(ratio, unit='%'):>20}"
        print(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and runs, for a smoke test")
    parser.add_argument("--rounds", type=int, help="rounds (default 30, 3 with --quick)")
    args = parser.parse_args()
    asyncio.run(main(args.quick, args.rounds))
