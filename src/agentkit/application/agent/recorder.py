"""StepRecorder: one run's trace as it is written: numbered steps handed to the step pipeline."""

import asyncio
from collections.abc import Sequence
from typing import Any

from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agent.prompts import PromptLog
from agentkit.application.errors import StoreUnavailable
from agentkit.application.pipeline.entries import SentPrompt, StepEntry, TraceHealth
from agentkit.domain.messages import Message, Usage
from agentkit.domain.steps import PromptRef, Step
from agentkit.domain.tools import ToolSchema


class StepRecorder(TraceHealth):
    """Numbers a run's steps and puts each in the step pipeline, which stores and shows it off the run's path.

    The pipeline reports back on the run's steps (`TraceHealth`): the durable trace's refusals are
    counted (`gaps`): a run whose trace lacks a step cannot claim success; `redacted` says a step
    was stored redacted. It also knows what the run's LLM calls sent before (`prompts`), so each
    message is stored once, and what they cost.
    """

    __slots__ = ("_llm", "deps", "prompts", "step_no")

    def __init__(self, deps: LoopDeps) -> None:
        super().__init__()
        self.deps = deps
        self.step_no = 0
        self.prompts = PromptLog(payloads=deps.pipeline.policy.payloads)
        self._llm: tuple[str, str, dict[str, Any]] | None = None  # the model's provider, name and parameters

    def prompt_of(
        self, messages: Sequence[Message], schemas: Sequence[ToolSchema]
    ) -> tuple[PromptRef | None, SentPrompt | None]:
        """What the LLM call about to be made sends, by reference (None when prompts are not captured)."""
        if not self.deps.pipeline.policy.capture:
            return None, None
        named = self._llm
        if named is None:  # a client names the same model and parameters on every request: asked once a run
            llm = self.deps.llm
            named = self._llm = (llm.provider, llm.model, dict(llm.parameters))
        return self.prompts.sent(
            messages, schemas, provider=named[0], model=named[1], parameters=named[2], step_no=self.step_no + 1
        )

    def cost_of(self, usage: Usage) -> float | None:
        """What an LLM call with this usage cost (None: unknown price)."""
        prices = self.deps.prices
        return None if prices is None else prices.cost_usd(self.deps.llm.provider, self.deps.llm.model, usage)

    def next_step(self) -> int:
        """The number of the step about to be recorded."""
        self.step_no += 1
        return self.step_no

    async def record(self, step: Step, sent: SentPrompt | None = None) -> None:
        """Hand the step to the pipeline; waits only while the pipeline is full (back-pressure)."""
        pipeline = self.deps.pipeline
        if not pipeline.put(StepEntry(step, self, sent)):
            await pipeline.room()

    async def flush_observers(self) -> None:
        """Let the step observers finish what they were given; their failures are logged."""
        await self.deps.pipeline.flush_observers()

    async def flush_durable(self, deadline: float) -> None:
        """Return once the durable trace holds every step recorded so far (and every consumer has it).

        A durable sink's flush waits while it retries its writes; this bounds the wait by `deadline`
        (`clock.monotonic()`).

        Raises:
            StoreUnavailable: the steps were not stored in time, or the sink failed.
        """
        pipeline = self.deps.pipeline
        await pipeline.deliver()  # the run's own steps, and what was queued before them: no store awaited
        trace = pipeline.trace
        if trace.flushed():
            return  # stored already (a store in memory takes what it is given): no timer armed
        remaining = max(deadline - self.deps.clock.monotonic(), 0)
        try:
            async with asyncio.timeout(remaining):
                await trace.flush()
        except TimeoutError:
            raise StoreUnavailable("the trace store did not take the steps in time") from None
        except StoreUnavailable:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"the trace store failed: {exc}") from exc
