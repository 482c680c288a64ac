"""The agent loop's own cost: time per step and memory per in-flight run, next to hand-written baselines.

Time: runs of 10 and 100 turns (each turn = one LLM call that asks for one async no-op tool, then
the tool call; the last turn answers) through the real AgentLoop with a scripted LLM and the
in-memory adapters, against a hand-written loop making the same LLM and tool calls in the same
process. One loop serves every run of a round, as one process serves its runs (its in-memory state
keeps the last 100 ended runs). The runtime's own time per turn is (loop - baseline) / turns.
Rounds alternate and the median round is reported, since these machines are noisy.

Memory: 1,000 runs in flight at once (each has made one tool call and waits inside its second
LLM call), measured with tracemalloc, against 1,000 bare tasks holding the same messages.

Run: `make bench` or `.venv/bin/python bench/loop_overhead.py [--quick]`.
"""

import argparse
import asyncio
import gc
import logging
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from typing import Any

import structlog

from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.application.agent import DEFAULT_SYSTEM_PROMPT, AgentConfig, AgentLoop
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import ToolRegistry, tool
from agentkit.domain.ids import OwnerId, ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall, Usage
from agentkit.domain.run import RunStatus
from agentkit.domain.tools import ToolSchema

GOAL = "Call the no-op tool until told otherwise."


@tool
async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter, so that no two calls are identical.
    """
    return "ok"


def script(turns: int) -> list[LLMResponse]:
    """`turns - 1` tool-call turns, then an answer."""
    usage = Usage(input_tokens=10, output_tokens=5)
    responses = [
        LLMResponse(tool_calls=(ToolCall(id=ToolCallId(f"c{i}"), name="noop", arguments={"i": i}),), usage=usage)
        for i in range(turns - 1)
    ]
    return [*responses, LLMResponse(text="done", usage=usage)]


class Cycling(LLMClient):
    """One run's script, answered over and over: the model of every run a Runtime serves."""

    def __init__(self, turns: int) -> None:
        self._script = script(turns)
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


class Runtime:
    """The real loop wired to in-memory adapters, serving run after run as one process does."""

    def __init__(self, llm: LLMClient, max_steps: int) -> None:
        clock = FixedClock()
        self.runs = InMemoryRunRepository(max_finished=100)
        self.trace = InMemoryTraceSink()
        self.runs.on_forget(self.trace.forget)
        loop = AgentLoop(
            memory_loop_deps(
                llm,
                ToolRegistry([noop]),
                runs=self.runs,
                trace=self.trace,
                sessions=InMemorySessionStore(clock),
                clock=clock,
                config=AgentConfig(),
            )
        )
        create = CreateRun(
            runs=self.runs, clock=clock, ids=SequentialIdGenerator(), max_steps=max_steps, max_goal_chars=10_000
        )
        self.agent = RunAgent(create=create, loop=loop)
        self.pipeline = loop.deps.pipeline

    async def close(self) -> None:
        """Stop the pipeline's writer."""
        await self.pipeline.aclose()

    async def run(self) -> RunStatus:
        run = await self.agent.execute(CreateRunInput(owner=OwnerId("bench"), goal=GOAL))
        return run.status


async def baseline_run(llm: LLMClient, schemas: Sequence[ToolSchema]) -> None:
    """What a hand-written loop does for the same run: the same LLM calls, tool calls and messages."""
    messages = [Message(role="system", content=DEFAULT_SYSTEM_PROMPT), Message(role="user", content=GOAL)]
    while True:
        response = await llm.chat(messages, schemas)
        messages.append(response.to_message())
        if not response.tool_calls:
            return
        for call in response.tool_calls:
            output = await noop.fn(**call.arguments)
            messages.append(Message(role="tool", content=output, tool_call_id=call.id, name=call.name))


async def time_per_turn(turns: int, runs_per_round: int, rounds: int) -> dict[str, float]:
    """Median seconds per turn for the loop and for the baseline."""
    schemas = [noop.schema]
    loop_samples: list[float] = []
    base_samples: list[float] = []
    for _ in range(rounds):
        runtime = Runtime(Cycling(turns), max_steps=turns + 1)
        gc.collect()
        started = time.perf_counter()
        for _ in range(runs_per_round):
            status = await runtime.run()
        loop_samples.append((time.perf_counter() - started) / (runs_per_round * turns))
        assert status is RunStatus.SUCCEEDED, status
        await runtime.close()

        llm = Cycling(turns)
        gc.collect()
        started = time.perf_counter()
        for _ in range(runs_per_round):
            await baseline_run(llm, schemas)
        base_samples.append((time.perf_counter() - started) / (runs_per_round * turns))
    loop_s, base_s = statistics.median(loop_samples), statistics.median(base_samples)
    return {"loop_us": loop_s * 1e6, "baseline_us": base_s * 1e6, "own_us": (loop_s - base_s) * 1e6}


class GateLLM(LLMClient):
    """Asks for one tool call, then waits at a gate inside the second LLM call, then answers.

    One instance serves every run: the conversation's length says which turn it is.
    """

    def __init__(self, gate: asyncio.Event, waiting: list[int]) -> None:
        self._gate = gate
        self._waiting = waiting
        self._call = LLMResponse(tool_calls=(ToolCall(id=ToolCallId("c1"), name="noop", arguments={"i": 1}),))

    @property
    def provider(self) -> str:
        """The bench's own."""
        return "bench"

    @property
    def model(self) -> str:
        """The bench's own."""
        return "gate"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        if len(messages) == 2:
            return self._call
        self._waiting[0] += 1
        await self._gate.wait()
        return LLMResponse(text="done")


async def memory_per_run(in_flight: int) -> dict[str, float]:
    """Bytes per in-flight run (loop) and per bare task holding the same messages (baseline)."""
    gate, waiting = asyncio.Event(), [0]
    shared = ToolRegistry([noop])

    async def bare_task() -> None:
        call = ToolCall(id=ToolCallId("c1"), name="noop", arguments={"i": 1})
        messages = [
            Message(role="system", content=DEFAULT_SYSTEM_PROMPT),
            Message(role="user", content=GOAL),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", content="ok", tool_call_id=call.id, name=call.name),
        ]
        waiting[0] += 1
        await gate.wait()
        del messages

    async def measure(start: Any) -> tuple[float, float]:
        """Bytes per run while in flight, and bytes per run still held once all have finished."""
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tasks = start()
        while waiting[0] < in_flight:  # noqa: ASYNC110 - a counter that 1,000 tasks bump is simpler than an event
            await asyncio.sleep(0.001)
        gc.collect()
        during = tracemalloc.get_traced_memory()[0]
        gate.set()
        await asyncio.gather(*tasks)
        del tasks
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        gate.clear()
        waiting[0] = 0
        return (during - before) / in_flight, (after - before) / in_flight

    clock = FixedClock()
    runs, trace, sessions = InMemoryRunRepository(), InMemoryTraceSink(), InMemorySessionStore(clock)
    ids = SequentialIdGenerator()

    # One loop and one use-case serve every run, as one API process does.
    loop = AgentLoop(
        memory_loop_deps(
            GateLLM(gate, waiting),
            shared,
            runs=runs,
            trace=trace,
            sessions=sessions,
            clock=clock,
            config=AgentConfig(),
        )
    )
    agent = RunAgent(create=CreateRun(runs=runs, clock=clock, ids=ids, max_steps=10, max_goal_chars=1000), loop=loop)

    def start_runs() -> list[asyncio.Task[Any]]:
        inp = CreateRunInput(owner=OwnerId("bench"), goal=GOAL)
        return [asyncio.create_task(agent.execute(inp)) for _ in range(in_flight)]

    loop_bytes, stored_bytes = await measure(start_runs)
    base_bytes, _ = await measure(lambda: [asyncio.create_task(bare_task()) for _ in range(in_flight)])
    return {"loop_bytes": loop_bytes, "stored_bytes": stored_bytes, "baseline_bytes": base_bytes}


async def main(quick: bool) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    rounds = 3 if quick else 7
    await time_per_turn(10, 20, 1)  # warm-up
    short = await time_per_turn(10, 100 if quick else 300, rounds)
    long = await time_per_turn(100, 10 if quick else 30, rounds)
    memory = await memory_per_run(1000)
    print(f"Python {sys.version.split()[0]}; one turn = one LLM call + one async no-op tool call (2 trace steps)")
    print(f"{'':24}{'AgentLoop':>12}{'baseline':>12}{'own time':>12}")
    for label, figures in (("10-turn runs, per turn", short), ("100-turn runs, per turn", long)):
        print(f"{label:24}{figures['loop_us']:10.1f}us{figures['baseline_us']:10.1f}us{figures['own_us']:10.1f}us")
    print(f"own time per turn, 100 vs 10 turns: {long['own_us'] / short['own_us']:.2f}x")
    loop_kib, base_kib = memory["loop_bytes"] / 1024, memory["baseline_bytes"] / 1024
    stored_kib = memory["stored_bytes"] / 1024
    print(f"memory per in-flight run (1,000 in flight), bare task holding the same messages: {base_kib:.1f} KiB")
    print(f"  AgentLoop, all of it:                        {loop_kib:.1f} KiB ({loop_kib / base_kib:.2f}x)")
    print(f"  of which the in-memory stores keep after the run (run record and trace): {stored_kib:.1f} KiB")
    transient = loop_kib - stored_kib
    print(f"  AgentLoop, what the run itself holds:        {transient:.1f} KiB ({transient / base_kib:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke test")
    asyncio.run(main(parser.parse_args().quick))
