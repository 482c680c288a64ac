"""The terminal view: live steps, colour and tables on a TTY; the plain text stays for pipes."""

import io
import re
from datetime import UTC, datetime

import pytest
from rich.console import Console

from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema
from agentkit.entrypoints.cli.rich_console import RichStepPrinter, print_run, print_tools, print_trace
from agentkit.entrypoints.cli.run_view import RunView, is_terminal
from agentkit.entrypoints.cli.tool_listing import plain_listing, type_words

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN = RunId("r1")
SCHEMA = ToolSchema(
    name="convert",
    description="Convert an amount between currencies.\n\nMore words.",
    parameters={
        "type": "object",
        "properties": {
            "amount": {"type": "number", "description": "The amount."},
            "to": {"enum": ["EUR", "USD"], "description": "The target currency."},
            "digits": {"type": "integer", "minimum": 0, "maximum": 6, "default": 2},
        },
        "required": ["amount", "to"],
    },
)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def coloured() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, color_system="standard", width=120), out


async def test_each_step_is_printed_in_colour_under_a_live_line() -> None:
    console, out = coloured()
    printer = RichStepPrinter(console)
    call = ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3})

    printer.start()
    await printer.record(
        LLMStep(
            run_id=RUN,
            step_no=1,
            created_at=NOW,
            latency_ms=3.0,
            usage=Usage(input_tokens=5, output_tokens=2),
            tool_calls=(call,),
        )
    )
    await printer.record(
        ToolStep(
            run_id=RUN,
            step_no=2,
            created_at=NOW,
            latency_ms=1.0,
            call_id=call.id,
            tool_name="add",
            arguments=call.arguments,
            result=ToolResult(ok=True, output="5.0"),
        )
    )
    await printer.record(LLMStep(run_id=RUN, step_no=3, created_at=NOW, latency_ms=2.0, text="2 + 3 = 5."))
    printer.stop()

    text = out.getvalue()
    assert "\x1b[" in text  # colour
    assert 'add({"a":2,"b":3})' in text
    assert "= " in text
    assert "5.0" in text
    assert "2 + 3 = 5." in text


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(out: io.StringIO) -> str:
    return ANSI.sub("", out.getvalue())


def test_a_streamed_step_is_written_as_it_comes_then_its_figures_under_it() -> None:
    console, out = coloured()
    printer = RichStepPrinter(console)
    call = ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3})

    printer.start()
    printer.on_delta(RUN, DeltaEvent(step_no=1, kind="tool_call", call_id="c1", name="add", text='{"a": 2, '))
    first = plain(out)
    printer.on_delta(RUN, DeltaEvent(step_no=1, kind="tool_call", text='"b": 3}'))
    printer.on_step(LLMStep(run_id=RUN, step_no=1, created_at=NOW, latency_ms=3.0, tool_calls=(call,)))
    printer.on_delta(RUN, DeltaEvent(step_no=3, kind="text", text="2 + 3"))
    printer.on_delta(RUN, DeltaEvent(step_no=3, kind="retry"))  # resumed elsewhere: the step is asked again
    printer.on_delta(RUN, DeltaEvent(step_no=3, kind="text", text="2 + 3 = 5."))
    printer.on_step(LLMStep(run_id=RUN, step_no=3, created_at=NOW, latency_ms=2.0, text="2 + 3 = 5."))
    printer.stop()

    assert first.endswith('[1] llm  -> add({"a": 2, ')  # the fragment is out before the rest is written
    # the printed lines, without the live line ("waiting for the model (step 1)")
    lines = [line.strip("\r ") for line in plain(out).splitlines() if "(step" not in line and line.strip("\r ")]
    assert lines[:2] == ['[1] llm  -> add({"a": 2, "b": 3})', "3.0 ms  tokens in=0 out=0"]
    assert lines[2:6] == [
        "[3] llm  2 + 3",
        "[3] the run was resumed: step 3 is asked again",
        "[3] llm  2 + 3 = 5.",
        "2.0 ms  tokens in=0 out=0",  # the figures, not the text again
    ]
    assert printer.streamed_text == "2 + 3 = 5."


def test_the_tools_table_shows_every_parameter_and_what_is_left_out() -> None:
    console, out = coloured()

    print_tools([SCHEMA], {"sql_readonly": "no demo database"}, {"convert": "rates are a day old"}, console)

    text = out.getvalue()
    for words in ("convert", "amount", "number", "(required)", 'one of "EUR", "USD"', "integer 0..6", "= 2"):
        assert words in text
    assert "rates are a day old" in text
    assert "sql_readonly" in text
    assert "not available: no demo database" in text


def test_the_plain_listing_is_one_line_a_parameter() -> None:
    listing = plain_listing([SCHEMA], {"sql_readonly": "no demo database"}, {})

    assert listing.splitlines() == [
        "convert: Convert an amount between currencies.",
        "  amount (number, required): The amount.",
        '  to (one of "EUR", "USD", required): The target currency.',
        "  digits (integer 0..6, default 2)",
        "sql_readonly: not available: no demo database",
    ]


@pytest.mark.parametrize(
    ("prop", "words"),
    [
        ({"type": "array", "items": {"type": "string"}}, "array of string"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "integer | null"),
        ({"type": ["string", "null"]}, "string | null"),
        ({}, "any"),
    ],
)
def test_types_in_few_words(prop: dict[str, object], words: str) -> None:
    assert type_words(prop) == words


def test_a_pipe_gets_plain_text_and_a_terminal_the_rich_view(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert not is_terminal(io.StringIO())
    assert is_terminal(Tty())
    assert type(RunView(io.StringIO()).printer).__name__ == "ConsoleStepPrinter"
    assert type(RunView(Tty()).printer).__name__ == "RichStepPrinter"
    # on a terminal the run streams: the printer hears fragments and steps in order, as a run observer
    assert (RunView(Tty()).streams, RunView(io.StringIO()).streams) == (True, False)
    assert (len(RunView(Tty()).run_observers), len(RunView(Tty()).step_observers)) == (1, 0)
    assert (len(RunView(io.StringIO()).run_observers), len(RunView(io.StringIO()).step_observers)) == (0, 1)

    monkeypatch.setenv("TERM", "dumb")
    assert not is_terminal(Tty())


def test_a_run_and_its_trace_as_tables() -> None:
    console, out = coloured()
    run = Run(
        id=RUN,
        owner=OwnerId("local"),
        goal="what is 2+3?",
        status=RunStatus.FAILED,
        failure_reason="the model still wanted to call tools after 1 step (max_steps)",
        input_tokens=7,
        output_tokens=2,
        created_at=NOW,
    )
    call = ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3})
    steps: list[Step] = [
        LLMStep(run_id=RUN, step_no=1, created_at=NOW, latency_ms=3.0, tool_calls=(call,)),
        ToolStep(
            run_id=RUN,
            step_no=2,
            created_at=NOW,
            latency_ms=1.0,
            call_id=call.id,
            tool_name="add",
            arguments=call.arguments,
            result=ToolResult(ok=False, output="", error="boom"),
        ),
    ]

    print_run(run, console)
    print_trace(run, steps, console)

    text = out.getvalue()
    for words in ("what is 2+3?", "failed", "after 1 step (max_steps)", "in=7 out=2", "run r1: failed"):
        assert words in text
    assert 'add({"a":2,"b":3})' in text
    assert "ERROR boom" in text
