"""`agentkit run --follow`: what it prints while a run waits on its client, and while its model writes."""

import io
import json
from typing import Any

import httpx
import pytest

from agentkit.entrypoints.cli.follow import follow_run, waiting_lines


def test_a_paused_run_shows_each_unanswered_call_and_where_to_answer_it() -> None:
    run = {
        "id": "r1",
        "status": "requires_action",
        "required_action": {
            "calls": [
                {"call_id": "c1", "name": "transfer", "arguments": {"amount": 5}, "digest": "d1", "kind": "approval"},
                {"call_id": "c2", "name": "pick", "arguments": {}, "digest": "d2", "kind": "client_tool"},
                {"call_id": "c3", "name": "done", "arguments": {}, "digest": "d3", "kind": "approval", "answer": {}},
            ]
        },
    }

    lines = waiting_lines(run)

    assert lines == [
        '  waits: transfer({"amount": 5}) call c1 digest d1 -> POST /v1/runs/r1/approvals',
        "  waits: pick({}) call c2 digest d2 -> POST /v1/runs/r1/tool_outputs",
    ]
    assert waiting_lines({"id": "r2", "status": "running", "required_action": None}) == []


def sse(*events: tuple[str, dict[str, Any]]) -> bytes:
    """A text/event-stream body of these events (ids in order)."""
    return "".join(
        f"id: {number}-0\nevent: {kind}\ndata: {json.dumps(data)}\n\n" for number, (kind, data) in enumerate(events, 1)
    ).encode()


RUN = {"id": "r1", "answer": None, "usage": {"input_tokens": 3, "output_tokens": 4}}
ANSWER = "The sum is 5."
STEP = {"step_no": 1, "kind": "llm", "latency_ms": 12.0, "input_tokens": 3, "output_tokens": 4, "text": ANSWER}


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def follow(body: bytes, out: io.StringIO) -> int:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
    )
    return await follow_run("http://api", "key", "r1", out=out, transport=transport)


def streamed(*pieces: str, step: dict[str, Any] = STEP) -> bytes:
    return sse(
        ("status", {**RUN, "status": "running"}),
        *[("delta", {"step_no": 1, "kind": "text", "text": piece}) for piece in pieces],
        ("step", step),
        ("status", {**RUN, "status": "succeeded", "answer": step["text"]}),
    )


async def test_on_a_terminal_the_answer_is_written_as_it_comes_then_its_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    out = Tty()

    code = await follow(streamed("The sum", " is", " 5."), out)

    assert code == 0
    assert out.getvalue().splitlines() == [
        "status: running",
        "[1] llm   The sum is 5.",
        "       12.0 ms  tokens in=3 out=4",
        "",
        "status: succeeded   tokens: in=3 out=4",  # the answer was just written: not twice
    ]


async def test_text_the_stream_missed_comes_from_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    out = Tty()

    await follow(streamed("The sum"), out)  # the rest of the fragments were dropped before this reader came

    assert out.getvalue().splitlines()[1] == "[1] llm   The sum is 5."


async def test_elsewhere_whole_steps_are_printed_as_before() -> None:
    out = io.StringIO()

    await follow(streamed("The sum", " is", " 5."), out)

    lines = out.getvalue().splitlines()
    assert lines[:2] == ["status: running", "[1] llm     12.0 ms  tokens in=3 out=4  -> answer: The sum is 5."]
    assert lines[-1] == ANSWER
