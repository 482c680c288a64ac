"""What seeing everything costs the loop: prompts captured, prices, Prometheus metrics and OpenTelemetry spans.

The loop of `bench/loop_overhead.py` (the scripted LLM, an async no-op tool, the in-memory
adapters; a turn is one LLM call that asks for one tool call, then that tool call: two trace
steps), run in configurations that add one thing at a time:

- `off`: no prompt capture, no prices, no observers (the loop as it was before issue 13);
- `prompts`: each LLM call's prompt reference, its new messages digested and redacted (secrets
  configured), as the service always does;
- `+ prices`: each call priced from genai-prices' table;
- `+ metrics`: the Prometheus observer (the run repository observed, every step counted);
- `+ otel 10%`: the OpenTelemetry observer with a 10 % trace-id ratio sampler (OTEL_TRACES_SAMPLER=
  parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.1): the other runs make no step spans;
- `+ otel`: every run traced, spans batched to an exporter that drops them (what the collector
  does with them is not the loop's cost);
- `events`: `off` plus the live event feed (GET /v1/runs/{id}/events) on the in-memory log: the run
  repository observed, every status change and step appended;
- `events redis`: the same on the Redis log (a stream per run, XADDs pipelined by its writer task on
  the same event loop, drained inside the timed round), when REDIS_URL is set.

Against the hand-written loop of loop_overhead.py, measured in the same rounds; "own" is the
loop's time minus the baseline's; the added cost of each configuration is given against `off`'s
own time. Rounds alternate and medians are reported, since these machines are noisy.

Run: `.venv/bin/python bench/observability_overhead.py [--quick]` (with REDIS_URL for `events redis`).
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

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunEventLog,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.metrics import PrometheusMetrics
from agentkit.adapters.otel import OTelRunObserver
from agentkit.adapters.pricing import GenAIPriceTable
from agentkit.adapters.redis import RedisRunEventLog, create_redis
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.agent.prompts import PromptPolicy
from agentkit.application.observation import ObservedRunRepository, ObserverStepSink, RunEventFeed, RunObservers
from agentkit.application.ports.run_event_log import RunEventLog
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import ToolRegistry
from agentkit.domain.ids import OwnerId
from agentkit.domain.run import RunStatus
from loop_overhead import GOAL, baseline_run, noop, script

CONFIGS = ["off", "prompts", "+ prices", "+ metrics", "+ otel 10%", "+ otel", "events"]
LEVELS = ("off", "prompts", "+ prices", "+ metrics", "+ otel 10%", "+ otel")


class DropSpans(SpanExporter):
    """An exporter that takes every batch and keeps nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Drop them."""
        return SpanExportResult.SUCCESS


def scripted(turns: int) -> ScriptedLLMClient:
    llm = ScriptedLLMClient(script(turns), provider="openai", model="gpt-4o-mini")
    llm.record_requests = False
    return llm


class Runtime:
    """The real loop in one of the configurations."""

    def __init__(
        self,
        llm: ScriptedLLMClient,
        max_steps: int,
        config: str,
        otel: OTelRunObserver,
        sampled: OTelRunObserver,
        logs: dict[str, RunEventLog],
    ) -> None:
        level = LEVELS.index(config) if config in LEVELS else 0
        clock = FixedClock()
        runs = InMemoryRunRepository()
        observers: list[RunObserver] = []
        if config in logs:
            observers.append(RunEventFeed(logs[config]))
        if level >= 3:
            observers.append(PrometheusMetrics())
        if config == "+ otel 10%":
            observers.append(sampled)
        elif level >= 5:
            observers.append(otel)
        fanout = RunObservers(observers)
        sinks: list[TraceSink] = [ObserverStepSink(fanout)] if observers else []
        repository = ObservedRunRepository(runs, fanout) if observers else runs
        policy = PromptPolicy(capture=level >= 1, secrets=("sk-a-secret-key-of-the-provider", "an-api-key-0123"))
        loop = AgentLoop(
            llm=llm,
            tools=ToolRegistry([noop]),
            runs=repository,
            trace=InMemoryTraceSink(),
            sessions=InMemorySessionStore(clock),
            clock=clock,
            config=AgentConfig(),
            observers=sinks,
            prompt_policy=policy,
            prices=GenAIPriceTable() if level >= 2 else None,
        )
        create = CreateRun(
            runs=repository, clock=clock, ids=SequentialIdGenerator(), max_steps=max_steps, max_goal_chars=10_000
        )
        self.agent = RunAgent(create=create, loop=loop)

    async def run(self) -> RunStatus:
        run = await self.agent.execute(CreateRunInput(owner=OwnerId("bench"), goal=GOAL))
        return run.status


async def per_turn(
    turns: int,
    runs_per_round: int,
    rounds: int,
    otel: OTelRunObserver,
    sampled: OTelRunObserver,
    logs: dict[str, RunEventLog],
) -> dict[str, float]:
    """Median µs per turn of each configuration and of the hand-written baseline: wall time, and under
    `<name> cpu` this process's CPU time (what a Redis server on the same machine does is not in it)."""
    samples: dict[str, list[float]] = {name: [] for name in (*CONFIGS, "baseline")}
    cpu: dict[str, list[float]] = {f"{name} cpu": [] for name in (*CONFIGS, "baseline")}
    for _ in range(rounds):
        for config in CONFIGS:
            runtimes = [Runtime(scripted(turns), turns + 1, config, otel, sampled, logs) for _ in range(runs_per_round)]
            gc.collect()
            started, started_cpu = time.perf_counter(), time.process_time()
            for runtime in runtimes:
                status = await runtime.run()
            if config in logs:
                await logs[config].aclose()  # the writer's work counts: what it queued is sent
            samples[config].append((time.perf_counter() - started) / (runs_per_round * turns) * 1e6)
            cpu[f"{config} cpu"].append((time.process_time() - started_cpu) / (runs_per_round * turns) * 1e6)
            assert status is RunStatus.SUCCEEDED, status
        clients = [scripted(turns) for _ in range(runs_per_round)]
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        for llm in clients:
            await baseline_run(llm, [noop.schema])
        samples["baseline"].append((time.perf_counter() - started) / (runs_per_round * turns) * 1e6)
        cpu["baseline cpu"].append((time.process_time() - started_cpu) / (runs_per_round * turns) * 1e6)
    return {name: statistics.median(values) for name, values in (*samples.items(), *cpu.items())}


async def main(quick: bool) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DropSpans(), max_queue_size=100_000))
    otel = OTelRunObserver(provider.get_tracer("bench"))
    ratio = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.1)))
    ratio.add_span_processor(BatchSpanProcessor(DropSpans(), max_queue_size=100_000))
    sampled = OTelRunObserver(ratio.get_tracer("bench"))
    rounds = 3 if quick else 9
    logs: dict[str, RunEventLog] = {"events": InMemoryRunEventLog(max_len=100, max_runs=100)}
    redis = None
    if os.environ.get("REDIS_URL"):
        redis = create_redis(os.environ["REDIS_URL"])
        prefix = f"agentkit-bench:{secrets.token_hex(4)}:"
        logs["events redis"] = RedisRunEventLog(redis, prefix=prefix, max_len=100, ttl_s=60)
        CONFIGS.append("events redis")
    await per_turn(10, 20, 1, otel, sampled, logs)  # warm-up
    figures = await per_turn(20, 50 if quick else 150, rounds, otel, sampled, logs)
    if redis is not None:
        keys = [key async for key in redis.scan_iter(match=f"{prefix}*")]
        for start in range(0, len(keys), 500):
            await redis.delete(*keys[start : start + 500])
        await redis.aclose()
    provider.shutdown()
    ratio.shutdown()
    base = figures["baseline"]
    off_own = figures["off"] - base
    print(f"Python {sys.version.split()[0]}; 20-turn runs; one turn = one LLM call + one tool call (2 trace steps)")
    print(f"{'configuration':14}{'per turn':>11}{'own':>11}{'added':>11}{'of own':>9}{'cpu added':>12}")
    print(f"{'baseline':14}{base:9.1f}us")
    for config in CONFIGS:
        own = figures[config] - base
        added = figures[config] - figures["off"]
        cpu_added = figures[f"{config} cpu"] - figures["off cpu"]
        print(f"{config:14}{figures[config]:9.1f}us{own:9.1f}us{added:9.1f}us{added / off_own:8.0%}{cpu_added:10.1f}us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke test")
    asyncio.run(main(parser.parse_args().quick))
