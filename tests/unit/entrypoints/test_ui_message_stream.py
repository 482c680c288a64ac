"""`format=vercel`: a run's events as the Vercel AI SDK's UI message stream, read as its client reads it."""

from datetime import UTC, datetime
from typing import Any

import msgspec

from agentkit.application.ports.run_event_log import DeltaEvent, RunEvent, StatusEvent, StepEvent
from agentkit.domain.actions import ActionKind, PendingCall, RequiredAction
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from agentkit.domain.tools import ToolResult
from agentkit.entrypoints.http.ui_stream import UIMessageStream
from tests.ui_message_protocol import read_message

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN = Run(id=RunId("r1"), owner=OwnerId("o"), goal="2+3?", created_at=NOW, session_id=None)


def ended(status: RunStatus, reason: str | None = None, answer: str | None = None) -> StatusEvent:
    return StatusEvent(
        run=msgspec.structs.replace(RUN, status=status, failure_reason=reason, answer=answer, finished_at=NOW)
    )


def answer(step_no: int, text: str) -> StepEvent:
    return StepEvent(step=LLMStep(run_id=RUN.id, step_no=step_no, created_at=NOW, latency_ms=1.0, text=text))


def text(step_no: int, piece: str) -> DeltaEvent:
    return DeltaEvent(step_no=step_no, kind="text", text=piece)


def chunks_of(events: list[RunEvent]) -> list[dict[str, Any]]:
    stream = UIMessageStream(RUN)
    made = stream.start()
    for event in events:
        made += stream.on_event(event)
    return [msgspec.to_builtins(chunk) for chunk in made]


def test_a_retried_step_is_reset_so_the_client_shows_no_mixed_text() -> None:
    chunks = chunks_of(
        [
            text(1, "The sum"),
            DeltaEvent(step_no=1, kind="retry"),  # the run was resumed elsewhere and asks again
            text(1, "2 + 3"),
            text(1, " is 5."),
            answer(1, "2 + 3 is 5."),
            ended(RunStatus.SUCCEEDED, answer="2 + 3 is 5."),
        ]
    )

    assert [c["type"] for c in chunks].count("reset-step") == 1
    assert read_message(chunks)["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "2 + 3 is 5.", "state": "done"},
    ]


def test_text_a_slow_client_missed_comes_with_the_step() -> None:
    # the log dropped the step's last fragments before this client read them: the step has it all
    chunks = chunks_of([text(1, "The sum"), answer(1, "The sum is 5."), ended(RunStatus.SUCCEEDED)])

    assert [(c["type"], c.get("delta")) for c in chunks if c["type"] == "text-delta"] == [
        ("text-delta", "The sum"),
        ("text-delta", " is 5."),
    ]
    assert read_message(chunks)["parts"][1]["text"] == "The sum is 5."


def test_a_client_that_saw_no_fragment_gets_each_step_whole() -> None:
    call = ToolCall(id=ToolCallId("c1"), name="add", arguments={"a": 2, "b": 3})
    calling = LLMStep(run_id=RUN.id, step_no=1, created_at=NOW, latency_ms=1.0, tool_calls=(call,))
    result = ToolStep(
        run_id=RUN.id,
        step_no=2,
        created_at=NOW,
        latency_ms=1.0,
        call_id=call.id,
        tool_name="add",
        arguments=call.arguments,
        result=ToolResult(ok=False, output="", error="division by zero"),
    )

    chunks = chunks_of(
        [StepEvent(step=calling), StepEvent(step=result), answer(3, "Cannot."), ended(RunStatus.SUCCEEDED)]
    )
    message = read_message(chunks)

    assert message["parts"] == [
        {"type": "step-start"},
        {
            "type": "tool-add",
            "toolCallId": "c1",
            "state": "output-error",
            "input": {"a": 2, "b": 3},
            "errorText": "division by zero",
        },
        {"type": "step-start"},
        {"type": "text", "text": "Cannot.", "state": "done"},
    ]


def test_a_run_that_fails_mid_answer_drops_the_partial_text_and_ends_with_an_error() -> None:
    failed_call = LLMStep(
        run_id=RUN.id, step_no=1, created_at=NOW, latency_ms=1.0, error="the connection broke mid-stream"
    )
    chunks = chunks_of(
        [
            text(1, "The sum"),
            StepEvent(step=failed_call),
            ended(RunStatus.FAILED, "the LLM call failed: the connection broke mid-stream"),
        ]
    )
    message = read_message(chunks)

    assert message["parts"] == [{"type": "step-start"}]  # the partial text is not the answer
    assert message["errors"] == ["the run ended failed: the LLM call failed: the connection broke mid-stream"]
    assert (chunks[-1]["type"], message["finish_reason"]) == ("finish", "error")


def test_a_paused_run_says_what_it_waits_on() -> None:
    waiting = PendingCall(
        call_id=ToolCallId("c1"), name="transfer", arguments={"amount": 5}, digest="d1", kind=ActionKind.APPROVAL
    )
    action = RequiredAction(calls=(waiting,), requested_at=NOW, expires_at=NOW, turn_step=1)
    paused = msgspec.structs.replace(RUN, status=RunStatus.REQUIRES_ACTION, action=action)

    chunks = chunks_of([StatusEvent(run=paused)])

    assert chunks[-1]["type"] == "data-required-action"
    assert chunks[-1]["data"]["calls"][0]["digest"] == "d1"


def test_a_run_whose_steps_expired_from_the_log_still_shows_its_answer() -> None:
    # a replay long after the run: the log kept none of its steps, the stored run stands in
    chunks = chunks_of([ended(RunStatus.SUCCEEDED, answer="2 + 3 is 5.")])

    assert read_message(chunks)["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "2 + 3 is 5.", "state": "done"},
    ]


def test_a_step_stored_without_its_content_leaves_what_streamed_in_place() -> None:
    # TRACE_PAYLOADS=false: the logged step has no text; the fragments the client saw stay
    redacted = LLMStep(run_id=RUN.id, step_no=1, created_at=NOW, latency_ms=1.0, redacted=True)
    chunks = chunks_of([text(1, "The sum is 5."), StepEvent(step=redacted), ended(RunStatus.SUCCEEDED)])

    assert "reset-step" not in [c["type"] for c in chunks]
    assert read_message(chunks)["parts"][1]["text"] == "The sum is 5."
