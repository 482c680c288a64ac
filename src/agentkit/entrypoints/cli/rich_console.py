"""The terminal's view for a person: live progress, colour and tables (rich), used only on a TTY.

Pipes and files get the plain text of `console.py` and `tool_listing.py`; this module (and rich)
is imported only when the output is a terminal.
"""

from collections.abc import Sequence
from typing import TextIO

import msgspec
from rich.console import Console
from rich.status import Status
from rich.table import Table
from rich.text import Text

from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.domain.ids import RunId
from agentkit.domain.policy import describe_arguments
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.cli.console import preview
from agentkit.entrypoints.cli.tool_listing import parameters, summary


def terminal_console(stream: TextIO) -> Console:
    """A rich console on this stream (rich honours NO_COLOR and TERM=dumb itself)."""
    return Console(file=stream, highlight=False, soft_wrap=True)


class RichStepPrinter(TraceSink, RunObserver):
    """Each step as a coloured line as it is recorded, under a live line saying what the run waits for.

    As a run observer (a streamed run: the observers hear fragments and steps in order), it also
    writes the model's text and call arguments as they come, then the step's figures under them. Call
    `start()` before the run and `stop()` after it.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._status: Status = console.status("waiting for the model (step 1)", spinner="dots")
        self._live = False  # between start() and stop()
        self._shown = False  # the live line is on screen (it is hidden while fragments are written)
        self._part: tuple[int, str] | None = None  # the step and part (text, or a call) being written
        self.streamed_text = ""  # the text the last streamed LLM step wrote

    def start(self) -> None:
        """Show the live line."""
        self._live = True
        self._show()

    def stop(self) -> None:
        """Remove the live line."""
        self._hide()
        self._live = False

    async def record(self, step: Step) -> None:
        """Print the step and say what comes next."""
        self.on_step(step)

    async def flush(self) -> None:
        """Nothing waits: each line is printed as the step comes."""

    def on_run(self, run: Run) -> None:
        """Nothing to show: the outcome is printed once the run returns."""

    def on_delta(self, run_id: RunId, delta: DeltaEvent) -> None:
        """Write the fragment where its part goes on (a new line for a new part)."""
        self._hide()  # partial lines and a live line do not mix
        if delta.kind == "retry":
            self._end_part()
            self._console.print(
                Text(f"[{delta.step_no}] the run was resumed: step {delta.step_no} is asked again", style="yellow")
            )
            self.streamed_text = ""
            return
        part = (delta.step_no, "text" if delta.kind == "text" else f"call {delta.index}")
        if part != self._part:
            self._end_part()
            if self._part is None or self._part[0] != delta.step_no:
                self.streamed_text = ""
            head = Text(f"[{delta.step_no}] ", style="dim")
            head.append("llm  ", style="bold cyan")
            if delta.kind == "tool_call":
                head.append(f"-> {delta.name or 'call'}(", style="magenta")
            self._console.print(head, end="")
            self._part = part
        if delta.kind == "text":
            self.streamed_text += delta.text
        self._console.print(Text(delta.text, style="magenta" if delta.kind == "tool_call" else ""), end="")

    def on_step(self, step: Step) -> None:
        """Print the step (its figures only, under what was streamed of it) and say what comes next."""
        streamed = self._part is not None and self._part[0] == step.step_no
        self._end_part()
        line = Text()
        line.append(f"[{step.step_no}] " if not streamed else "    ", style="dim")
        if isinstance(step, LLMStep):
            usage = step.usage
            if not streamed:
                line.append("llm  ", style="bold cyan")
            line.append(f"{step.latency_ms:7.1f} ms  ", style="dim")
            line.append(f"tokens in={usage.input_tokens} out={usage.output_tokens}", style="dim")
            if step.attempts > 1:
                line.append(f"  attempts={step.attempts}", style="yellow")
            if step.error:
                line.append(f"  ERROR {step.error}", style="bold red")
                nxt = None
            elif step.tool_calls:
                if not streamed:
                    calls = ", ".join(f"{c.name}({describe_arguments(c.arguments)})" for c in step.tool_calls)
                    line.append(f"  -> {calls}", style="magenta")
                nxt = f"running {step.tool_calls[0].name} (step {step.step_no + 1})"
            else:
                if not streamed:
                    line.append("  -> answer: ", style="green")
                    line.append(preview(step.text))
                nxt = None
        else:
            line.append("tool ", style="bold magenta")
            line.append(f"{step.latency_ms:7.1f} ms  ", style="dim")
            line.append(f"{step.tool_name}({describe_arguments(step.arguments)})")
            if step.result.ok:
                line.append("\n      = ", style="dim")
                line.append(preview(step.result.output))
            else:
                line.append(f"\n      = ERROR {step.result.error}", style="red")
            if step.result.truncated:
                line.append(" [truncated]", style="yellow")
            nxt = f"waiting for the model (step {step.step_no + 1})"
        self._console.print(line)
        if nxt is not None:  # else the run is about to end
            self._status.update(nxt)
            self._show()

    def _end_part(self) -> None:
        """End the line a part was written on (a call's arguments close their parenthesis)."""
        if self._part is None:
            return
        if self._part[1].startswith("call"):
            self._console.print(Text(")", style="magenta"), end="")
        self._console.print()
        self._part = None

    def _show(self) -> None:
        if self._live and not self._shown:
            self._status.start()
            self._shown = True

    def _hide(self) -> None:
        if self._shown:
            self._status.stop()
            self._shown = False


_STATUS_STYLE = {RunStatus.SUCCEEDED: "bold green", RunStatus.CANCELLED: "bold yellow"}


def print_outcome(run: Run, console: Console, *, answer: bool = True) -> None:
    """The run's status in colour, its reason, token totals and answer (unless `answer` is False: it was
    streamed already)."""
    console.print()
    line = Text("status: ")
    line.append(run.status.value, style=_STATUS_STYLE.get(run.status, "bold red"))
    line.append(f"   tokens: in={run.input_tokens} out={run.output_tokens}", style="dim")
    console.print(line)
    if run.failure_reason:
        console.print(Text(f"reason: {run.failure_reason}", style="red"))
    if run.answer and answer:
        console.print()
        console.print(Text(run.answer))


def print_tools(
    schemas: Sequence[ToolSchema], absent: dict[str, str], limited: dict[str, str], console: Console
) -> None:
    """The tools as a table: name and summary, then one row per parameter; then what is left out."""
    table = Table(show_header=True, header_style="bold", show_lines=True, expand=False)
    table.add_column("tool", style="bold cyan", no_wrap=True)
    table.add_column("parameters")
    table.add_column("what it does")
    for schema in schemas:
        params = Text()
        for index, param in enumerate(parameters(schema)):
            if index:
                params.append("\n")
            params.append(param.name, style="bold")
            params.append(f": {param.type}", style="magenta")
            if param.required:
                params.append(" (required)", style="yellow")
            elif param.default is not None:
                params.append(f" = {param.default}", style="dim")
            if param.description:
                params.append(f"\n  {param.description}", style="dim")
        what = Text(summary(schema))
        if schema.name in limited:
            what.append(f"\nnote: {limited[schema.name]}", style="yellow")
        table.add_row(schema.name, params, what)
    if schemas:
        console.print(table)
    else:
        console.print("no tools registered (set AGENTKIT_TOOL_MODULES to add your own)")
    for name, reason in absent.items():
        line = Text(name, style="bold")
        line.append(f" not available: {reason}", style="yellow")
        console.print(line)


def print_run(run: Run, console: Console) -> None:
    """A run's summary as a two-column table."""
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    status = Text(run.status.value, style=_STATUS_STYLE.get(run.status, "bold red"))
    if run.cancel_requested and run.status is not RunStatus.CANCELLED:
        status.append("  (cancel requested)", style="yellow")
    rows: list[tuple[str, str | Text | None]] = [
        ("id", run.id),
        ("status", status),
        ("goal", run.goal),
        ("answer", run.answer),
        ("output", None if run.output is None else msgspec.json.encode(run.output).decode()),
        ("reason", Text(run.failure_reason, style="red") if run.failure_reason else None),
        ("session", run.session_id),
        ("tokens", f"in={run.input_tokens} out={run.output_tokens}"),
        ("created", run.created_at.isoformat()),
        ("started", run.started_at.isoformat() if run.started_at else None),
        ("finished", run.finished_at.isoformat() if run.finished_at else None),
    ]
    for name, value in rows:
        if value is not None:
            table.add_row(name, value)
    console.print(table)


def print_trace(run: Run, steps: Sequence[Step], console: Console) -> None:
    """A run's steps as a table: one row per LLM call or tool call."""
    table = Table(title=f"run {run.id}: {run.status.value}", title_justify="left", header_style="bold")
    table.add_column("#", justify="right", style="dim")
    table.add_column("kind")
    table.add_column("ms", justify="right", style="dim")
    table.add_column("tokens in/out", justify="right", style="dim")
    table.add_column("what")
    for step in steps:
        if isinstance(step, LLMStep):
            kind = Text("llm", style="cyan")
            tokens = f"{step.usage.input_tokens}/{step.usage.output_tokens}"
            if step.error:
                what = Text(f"ERROR {step.error}", style="red")
            elif step.tool_calls:
                calls = ", ".join(f"{c.name}({describe_arguments(c.arguments)})" for c in step.tool_calls)
                what = Text(f"-> {calls}", style="magenta")
            else:
                what = Text(f"answer: {preview(step.text)}", style="green")
        else:
            kind = Text("tool", style="magenta")
            tokens = ""
            call = f"{step.tool_name}({describe_arguments(step.arguments)})"
            result = preview(step.result.output) if step.result.ok else f"ERROR {step.result.error}"
            what = Text(f"{call}\n= ")
            what.append(result, style=None if step.result.ok else "red")
        table.add_row(str(step.step_no), kind, f"{step.latency_ms:.1f}", tokens, what)
    console.print(table)
