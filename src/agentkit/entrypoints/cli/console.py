"""Live step-by-step output of a run in the terminal."""

import sys
from typing import TextIO

from agentkit.application.ports.trace_sink import TraceSink
from agentkit.domain.policy import describe_arguments
from agentkit.domain.run import Run
from agentkit.domain.steps import LLMStep, Step

_PREVIEW = 200


class ConsoleStepPrinter(TraceSink):
    """Prints each step as the loop records it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._out = stream or sys.stdout

    async def record(self, step: Step) -> None:
        """Print one line (two for a tool result) describing the step."""
        if isinstance(step, LLMStep):
            usage = step.usage
            tokens = f"tokens in={usage.input_tokens} out={usage.output_tokens}"
            head = f"[{step.step_no}] llm   {step.latency_ms:7.1f} ms  {tokens}"
            if step.attempts > 1:
                head += f"  attempts={step.attempts}"
            if step.error:
                line = f"{head}  ERROR {step.error}"
            elif step.tool_calls:
                calls = ", ".join(f"{c.name}({describe_arguments(c.arguments)})" for c in step.tool_calls)
                line = f"{head}  -> {calls}"
            else:
                line = f"{head}  -> answer: {preview(step.text)}"
        else:
            outcome = preview(step.result.output) if step.result.ok else f"ERROR {step.result.error}"
            mark = " [truncated]" if step.result.truncated else ""
            call = f"{step.tool_name}({describe_arguments(step.arguments)})"
            line = f"[{step.step_no}] tool  {step.latency_ms:7.1f} ms  {call}\n      = {outcome}{mark}"
        print(line, file=self._out, flush=True)

    async def flush(self) -> None:
        """Nothing waits: each line is printed as the step comes."""


def announce(line: str) -> None:
    """Say where the command's state lives, in one line on stderr (stdout stays the command's output)."""
    print(f"agentkit: {line}", file=sys.stderr, flush=True)


def print_outcome(run: Run, stream: TextIO | None = None) -> None:
    """The run's status, answer (or reason), token totals and cost (when the model's price is known)."""
    out = stream or sys.stdout
    cost = "" if run.cost_usd is None else f"   cost: ${run.cost_usd:.6f}"
    print(f"\nstatus: {run.status.value}   tokens: in={run.input_tokens} out={run.output_tokens}{cost}", file=out)
    if run.failure_reason:
        print(f"reason: {run.failure_reason}", file=out)
    if run.answer:
        print(f"\n{run.answer}", file=out)


def preview(text: str) -> str:
    """The text on one line, cut to a few hundred characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[:_PREVIEW] + "..."
