"""Parallel tool calls and tools in worker processes: what they save and what they cost (issue 22).

1. Five calls of 0.5 s asked for in one turn, through the real AgentLoop (in-memory adapters, a
   scripted LLM, the system clock): the tool phase, from the first call's start to the last call's
   end as the trace records them, against 0.5 s. Async tools; sync tools in threads; sync tools in
   worker processes (a warm pool of five).
2. A call in a worker process against the same call in a thread: a sync no-op through
   `ToolRegistry.execute`, one call after another, latency p50 and p99 of each, and the difference.
3. A tool that loops forever, in a process, with a 0.5 s timeout: how long past its timeout the
   call returned, and until its process was gone (killed and reaped).
4. 1,000 such calls (timeout 0.05 s; each kills its process, which the pool replaces): afterwards,
   no child process of this one (zombies included) and no thread more than before.
5. The loop's own time per turn (the real loop less a hand-written one making the same LLM and
   tool calls) for turns of one no-op async call (the path a single call takes) and of five at once
   (a batch): what each call beyond the first costs.

Run: `.venv/bin/python bench/parallel_tools.py [--quick]`.
"""

import argparse
import asyncio
import gc
import logging
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

import isolated_tools
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import FixedClock, InMemoryRunRepository, InMemoryTraceSink, SequentialIdGenerator
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.system import SystemClock
from agentkit.adapters.tools.processes import ProcessPoolConfig, ProcessToolSandbox
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import Tool, ToolContext, ToolRegistry, tool
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall, Usage
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import ToolStep
from agentkit.domain.tools import ToolSchema

NAP_S = 0.5
BATCH = 5
CONTEXT = ToolContext(run_id=RunId("bench"), owner=OwnerId("bench"))


@tool(idempotent=True)
async def wait_async(i: int) -> str:
    """Wait half a second without blocking.

    Args:
        i: Which call.
    """
    await asyncio.sleep(NAP_S)
    return "ok"


nap_thread = Tool(isolated_tools.nap, name="nap_thread", isolation="thread", idempotent=True)
nap_process = Tool(isolated_tools.nap, name="nap_process", isolation="process", idempotent=True)
noop_thread = Tool(isolated_tools.noop, name="noop_thread", isolation="thread", idempotent=True)
noop_process = Tool(isolated_tools.noop, name="noop_process", isolation="process", idempotent=True)
spin_process = Tool(isolated_tools.spin, name="spin", isolation="process", timeout_s=0.5)


@tool(idempotent=True)
async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter.
    """
    return "ok"


def quiet() -> None:
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))


def batch_turn(name: str, arguments: dict[str, Any]) -> LLMResponse:
    # each its own arguments: five identical calls in a row would stop the run (the repeated-call limit)
    calls = tuple(ToolCall(id=ToolCallId(f"c{i}"), name=name, arguments={**arguments, "i": i}) for i in range(BATCH))
    return LLMResponse(tool_calls=calls, usage=Usage(input_tokens=10, output_tokens=5))


async def tool_phase(name: str, arguments: dict[str, Any], tools: ToolRegistry) -> float:
    """Seconds from the first call's start to the last call's end, for one turn of five calls."""
    llm = ScriptedLLMClient([batch_turn(name, arguments), LLMResponse(text="done")])
    runs, trace, clock = InMemoryRunRepository(), InMemoryTraceSink(), SystemClock()
    loop = AgentLoop(memory_loop_deps(llm, tools, runs=runs, trace=trace, clock=clock, config=AgentConfig()))
    create = CreateRun(runs=runs, clock=clock, ids=SequentialIdGenerator(), max_steps=5, max_goal_chars=100)
    run = await RunAgent(create=create, loop=loop).execute(CreateRunInput(owner=OwnerId("bench"), goal="five"))
    await loop.deps.pipeline.aclose()
    assert run.status is RunStatus.SUCCEEDED, run.failure_reason
    steps = [step for step in await trace.steps(run.id) if isinstance(step, ToolStep)]
    assert len(steps) == BATCH, len(steps)
    assert all(step.result.ok for step in steps), [step.result.error for step in steps]
    starts = [step.started_at for step in steps if step.started_at is not None]
    return (max(step.created_at for step in steps) - min(starts)).total_seconds()


async def phases(rounds: int, pool: ProcessToolSandbox) -> None:
    print(f"1. five calls of {NAP_S:g} s in one turn: the tool phase (median of {rounds})")
    tools = ToolRegistry([wait_async, nap_thread, nap_process], sandbox=pool)
    for label, name, arguments, aim in [
        ("async tools", "wait_async", {}, 1.1),
        ("sync tools, threads", "nap_thread", {"seconds": NAP_S}, 1.2),
        ("sync tools, processes", "nap_process", {"seconds": NAP_S}, None),
    ]:
        took = statistics.median([await tool_phase(name, arguments, tools) for _ in range(rounds)])
        ratio = took / NAP_S
        verdict = "" if aim is None else f" (aim <= {aim:g}x: {'met' if ratio <= aim else 'NOT met'})"
        print(f"   {label:<24}{took * 1000:8.1f} ms = {ratio:.2f}x {NAP_S:g} s{verdict}")


def percentile(samples: Sequence[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def per_call(calls: int, pool: ProcessToolSandbox) -> None:
    tools = ToolRegistry([noop_thread, noop_process], sandbox=pool)
    latencies: dict[str, list[float]] = {"noop_thread": [], "noop_process": []}
    for i in range(calls):
        for name, samples in latencies.items():  # alternating: the machine's load falls on both alike
            started = time.perf_counter()
            result = await tools.execute(ToolCall(id=ToolCallId("c"), name=name, arguments={"i": i}), CONTEXT)
            samples.append(time.perf_counter() - started)
            assert result.ok, result.error
    thread, process = latencies["noop_thread"], latencies["noop_process"]
    print(f"2. a sync no-op through ToolRegistry.execute, {calls} calls each, alternating")
    for label, samples in (("in a thread", thread), ("in a worker process", process)):
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        print(f"   {label:<24}p50 {p50 * 1e6:8.1f} us   p99 {p99 * 1e6:8.1f} us")
    overhead = percentile(process, 0.5) - percentile(thread, 0.5)
    verdict = "met" if overhead <= 0.002 else "NOT met"
    print(f"   the process's cost per call, p50: {overhead * 1e6:.1f} us (aim <= 2 ms p50: {verdict})")


def children() -> list[tuple[int, str]]:
    """This process's child processes: (pid, state), zombies included."""
    found = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its closing parenthesis
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == me:
            found.append((int(entry.name), state))
    return found


def threads() -> int:
    """The threads of this process, as the kernel counts them (not only Python's)."""
    return len(os.listdir("/proc/self/task"))


async def killed(calls: int, pool: ProcessToolSandbox) -> None:
    tools = ToolRegistry([spin_process], sandbox=pool)
    late: list[float] = []
    reaped: list[float] = []
    for i in range(calls):
        await pool.warm()
        before = set(pool.processes)
        started = time.perf_counter()
        result = await tools.execute(ToolCall(id=ToolCallId("c"), name="spin", arguments={"i": i}), CONTEXT)
        returned = time.perf_counter()
        assert result.error is not None
        assert "timed out" in result.error, result.error
        late.append(returned - started - 0.5)
        gone = before - set(pool.processes)
        while any(pid in {child for child, _ in children()} for pid in gone):  # noqa: ASYNC110 - /proc says
            await asyncio.sleep(0.001)
        reaped.append(time.perf_counter() - started - 0.5)
    print(f"3. a tool looping forever in a process, timeout 0.5 s, {calls} calls")
    print(
        f"   returned past its timeout: p50 {percentile(late, 0.5) * 1000:.1f} ms, max {max(late) * 1000:.1f} ms; "
        f"process gone (killed and reaped): p50 {percentile(reaped, 0.5) * 1000:.1f} ms, "
        f"max {max(reaped) * 1000:.1f} ms (aim: within timeout + 100 ms)"
    )


async def thousand(calls: int) -> None:
    threads_before, started = threads(), time.perf_counter()
    pool = ProcessToolSandbox(ProcessPoolConfig(size=BATCH))
    hung = Tool(isolated_tools.spin, name="spin", isolation="process", timeout_s=0.05)
    tools = ToolRegistry([hung], sandbox=pool)
    timed_out = 0
    for i in range(calls):
        result = await tools.execute(ToolCall(id=ToolCallId("c"), name="spin", arguments={"i": i}), CONTEXT)
        timed_out += result.error is not None and "timed out" in result.error
    during = len(children())
    await pool.aclose()
    left = children()
    print(f"4. {calls} calls of a tool looping forever, timeout 0.05 s, a pool of {BATCH}")
    print(
        f"   {timed_out} killed at their timeout in {time.perf_counter() - started:.1f} s; worker processes "
        f"before closing: {during} (at most {BATCH}); after: {len(left)} child processes "
        f"({sum(state == 'Z' for _, state in left)} zombies); threads {threads_before} before, {threads()} after"
    )


class Cycling(LLMClient):
    """One run's script, answered over and over."""

    def __init__(self, turns: Sequence[LLMResponse]) -> None:
        self._script = list(turns)
        self._next = 0

    @property
    def provider(self) -> str:
        """The bench's own."""
        return "bench"

    @property
    def model(self) -> str:
        """The bench's own."""
        return "cycling"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        response = self._script[self._next]
        self._next = (self._next + 1) % len(self._script)
        return response


def script(turns: int, per_turn: int) -> list[LLMResponse]:
    usage = Usage(input_tokens=10, output_tokens=5)
    responses = [
        LLMResponse(
            tool_calls=tuple(
                ToolCall(id=ToolCallId(f"c{t}-{i}"), name="noop", arguments={"i": t * per_turn + i})
                for i in range(per_turn)
            ),
            usage=usage,
        )
        for t in range(turns)
    ]
    return [*responses, LLMResponse(text="done", usage=usage)]


async def loop_time_per_turn(turns: int, per_turn: int, runs: int) -> float:
    clock = FixedClock()
    repo, trace = InMemoryRunRepository(max_finished=100), InMemoryTraceSink()
    repo.on_forget(trace.forget)
    loop = AgentLoop(
        memory_loop_deps(Cycling(script(turns, per_turn)), ToolRegistry([noop]), runs=repo, trace=trace, clock=clock)
    )
    create = CreateRun(runs=repo, clock=clock, ids=SequentialIdGenerator(), max_steps=turns + 2, max_goal_chars=100)
    agent = RunAgent(create=create, loop=loop)
    gc.collect()
    started = time.perf_counter()
    for _ in range(runs):
        run = await agent.execute(CreateRunInput(owner=OwnerId("bench"), goal="noop"))
        assert run.status is RunStatus.SUCCEEDED, run.failure_reason
    took = time.perf_counter() - started
    await loop.deps.pipeline.aclose()
    return took / (runs * turns)


async def baseline_per_turn(turns: int, per_turn: int, runs: int) -> float:
    """A hand-written loop: the same LLM calls, tool calls (one after another) and messages."""
    llm, schemas = Cycling(script(turns, per_turn)), [noop.schema]
    gc.collect()
    started = time.perf_counter()
    for _ in range(runs):
        messages = [Message(role="user", content="noop")]
        while True:
            response = await llm.chat(messages, schemas)
            messages.append(response.to_message())
            if not response.tool_calls:
                break
            for call in response.tool_calls:
                output = await noop.fn(**call.arguments)
                messages.append(Message(role="tool", content=output, tool_call_id=call.id, name=call.name))
    return (time.perf_counter() - started) / (runs * turns)


async def batch_cost(rounds: int, runs: int) -> None:
    own: dict[int, list[float]] = {1: [], BATCH: []}
    for _ in range(rounds):  # alternating, the median round reported
        for per_turn, samples in own.items():
            loop = await loop_time_per_turn(10, per_turn, runs)
            samples.append(loop - await baseline_per_turn(10, per_turn, runs))
    one, five = statistics.median(own[1]), statistics.median(own[BATCH])
    print(f"5. the loop's own time per turn of no-op async calls (median of {rounds} rounds of {runs} 10-turn runs)")
    print(f"   one call a turn                {one * 1e6:7.1f} us")
    print(f"   {BATCH} calls a turn, at once        {five * 1e6:7.1f} us")
    print(f"   each call beyond the first     {(five - one) / (BATCH - 1) * 1e6:7.1f} us")


async def main(quick: bool) -> None:
    quiet()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    pool = ProcessToolSandbox(ProcessPoolConfig(size=BATCH))
    await pool.warm()
    try:
        await phases(3 if quick else 5, pool)
        await per_call(300 if quick else 2000, pool)
        await killed(5 if quick else 20, pool)
    finally:
        await pool.aclose()
    await thousand(100 if quick else 1000)
    await batch_cost(3 if quick else 7, 30 if quick else 200)
    print(f"Python threads at the end: {threading.active_count()}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    asyncio.run(main(parser.parse_args().quick))
