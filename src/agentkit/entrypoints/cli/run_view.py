"""How `agentkit run` shows a run: plain lines on a pipe, live progress and colour on a terminal."""

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from agentkit.application.ports.trace_sink import TraceSink
from agentkit.domain.run import Run
from agentkit.entrypoints.cli import console

if TYPE_CHECKING:
    from rich.console import Console

    from agentkit.application.ports.run_observer import RunObserver
    from agentkit.entrypoints.cli.rich_console import RichStepPrinter


def is_terminal(stream: TextIO) -> bool:
    """Whether a person reads this stream: a TTY, and not TERM=dumb."""
    return stream.isatty() and os.environ.get("TERM") != "dumb"


class RunView:
    """The live steps (`printer`) and the outcome of one run on `stream`.

    On a terminal the run streams: the printer is a run observer, which hears the model's fragments
    and the steps in order and writes the text as it comes. Elsewhere (a pipe, a file) it is a trace
    observer that prints whole steps. rich is imported only when the stream is a terminal.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._console: Console | None = None
        self._rich: RichStepPrinter | None = None
        self.printer: TraceSink
        if is_terminal(stream):
            from agentkit.entrypoints.cli import rich_console

            self._console = rich_console.terminal_console(stream)
            self._rich = rich_console.RichStepPrinter(self._console)
            self.printer = self._rich
        else:
            self.printer = console.ConsoleStepPrinter(stream)

    @property
    def streams(self) -> bool:
        """Whether the run should stream its model's answers (someone watches them being written)."""
        return self._rich is not None

    @property
    def step_observers(self) -> Sequence[TraceSink]:
        """The trace observers to hand the container (the plain printer)."""
        return () if self._rich is not None else (self.printer,)

    @property
    def run_observers(self) -> Sequence["RunObserver"]:
        """The run observers to hand the container (the terminal's printer: fragments and steps in order)."""
        return () if self._rich is None else (self._rich,)

    def start(self) -> None:
        """The run begins: show the live line (terminal only)."""
        if self._rich is not None:
            self._rich.start()

    def stop(self) -> None:
        """The run ended: remove the live line."""
        if self._rich is not None:
            self._rich.stop()

    def outcome(self, run: Run) -> None:
        """The status, reason, token totals and answer (not again when it was just streamed)."""
        if self._console is not None and self._rich is not None:
            from agentkit.entrypoints.cli.rich_console import print_outcome

            print_outcome(run, self._console, answer=run.answer != self._rich.streamed_text)
        else:
            console.print_outcome(run, self._stream)
