"""What streaming costs the loop: CPU per streamed fragment, and what a 1,000-token answer adds to a run.

One loop on in-memory state with the run event log among its observers (as the service has), a model
that answers in `tokens` fragments through `stream()` (yielding to the event loop between them, as a
provider's stream does while it waits for the network), against the same answer asked for whole
through `chat()`, and against a bare consumer of the same stream (the provider's own cost), in the
same rounds. (streamed - whole - bare) / tokens is the loop's own cost per streamed token: putting
the fragment on the step pipeline, joining fragments in the writer's batches, logging them and
dropping them once the step is logged. Rounds alternate and the median round is reported.

Run: `.venv/bin/python bench/stream_cost.py [--quick]`.
"""

import argparse
import asyncio
import gc
import logging
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence

import structlog

from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunEventLog,
    InMemoryRunRepository,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.application.agent import AgentLoop
from agentkit.application.observation import ObservedRunRepository, RunEventFeed, RunObservers
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.domain.ids import OwnerId
from agentkit.domain.messages import LLMDelta, LLMResponse, Message, TextDelta, Usage
from agentkit.domain.run import RunStatus
from agentkit.domain.tools import ToolSchema


class Answering(LLMClient):
    """Answers every run with the same `tokens`-token text, whole (`chat`) or token by token (`stream`)."""

    def __init__(self, tokens: int) -> None:
        self._pieces = [f" word{n}" for n in range(tokens)]
        self._response = LLMResponse(text="".join(self._pieces), usage=Usage(input_tokens=10, output_tokens=tokens))

    @property
    def provider(self) -> str:
        """The bench's own."""
        return "bench"

    @property
    def model(self) -> str:
        """The bench's own."""
        return "answering"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The whole answer."""
        return self._response

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """The answer a token at a time, yielding to the event loop between them as a network stream does."""
        for piece in self._pieces:
            yield TextDelta(text=piece)
            await asyncio.sleep(0)
        yield self._response


class Runtime:
    """One loop serving run after run, its events logged as the service logs them."""

    def __init__(self, tokens: int) -> None:
        clock = FixedClock()
        self.log = InMemoryRunEventLog(max_len=100_000, max_runs=10)
        runs = InMemoryRunRepository(max_finished=10)
        trace = InMemoryTraceSink()
        runs.on_forget(trace.forget)
        runs.on_forget(self.log.forget)
        self.pipeline = StepPipeline(trace=trace, run_observers=RunObservers([RunEventFeed(self.log)]))
        observed = ObservedRunRepository(runs, self.pipeline)
        loop = AgentLoop(memory_loop_deps(Answering(tokens), runs=observed, clock=clock, pipeline=self.pipeline))
        create = CreateRun(runs=observed, clock=clock, ids=SequentialIdGenerator(), max_steps=2, max_goal_chars=100)
        self.agent = RunAgent(create=create, loop=loop)

    async def run(self, *, stream: bool) -> None:
        done = await self.agent.execute(CreateRunInput(owner=OwnerId("bench"), goal="say it", stream=stream))
        assert done.status is RunStatus.SUCCEEDED, done

    async def close(self) -> None:
        """Deliver what is queued, stop the writer."""
        await self.pipeline.aclose()


async def cpu_per_run(tokens: int, runs: int, *, stream: bool) -> float:
    """CPU seconds per run (the writer's work drained inside the measure)."""
    runtime = Runtime(tokens)
    gc.collect()
    started = time.process_time()
    for _ in range(runs):
        await runtime.run(stream=stream)
    await runtime.close()
    return (time.process_time() - started) / runs


async def bare_stream(tokens: int, runs: int) -> float:
    """CPU seconds per answer just to iterate the model's stream (what the provider costs anyway)."""
    model = Answering(tokens)
    gc.collect()
    started = time.process_time()
    for _ in range(runs):
        async for _item in model.stream([], []):
            pass
    return (time.process_time() - started) / runs


async def main(quick: bool) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    tokens, runs, rounds = 1000, (10 if quick else 40), (3 if quick else 9)
    await cpu_per_run(tokens, 3, stream=True)  # warm-up
    whole: list[float] = []
    streamed: list[float] = []
    bare: list[float] = []
    for index in range(rounds):
        order = (False, True) if index % 2 == 0 else (True, False)
        for stream in order:
            (streamed if stream else whole).append(await cpu_per_run(tokens, runs, stream=stream))
        bare.append(await bare_stream(tokens, runs))
    whole_s, streamed_s, bare_s = statistics.median(whole), statistics.median(streamed), statistics.median(bare)
    per_token = [(s - w - b) / tokens for s, w, b in zip(streamed, whole, bare, strict=True)]
    print(f"Python {sys.version.split()[0]}; {rounds} rounds of {runs} runs of one {tokens:,}-token answer")
    print(f"  asked whole (chat):       {whole_s * 1e3:8.3f} ms CPU a run")
    print(f"  streamed token by token:  {streamed_s * 1e3:8.3f} ms CPU a run")
    print(f"  the bare stream alone:    {bare_s * 1e3:8.3f} ms CPU an answer (the model's own)")
    print(
        f"  streaming's own cost per token: {statistics.median(per_token) * 1e6:.2f} us "
        f"[{min(per_token) * 1e6:.2f}, {max(per_token) * 1e6:.2f}] (aim <= 2 us)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke test")
    asyncio.run(main(parser.parse_args().quick))
