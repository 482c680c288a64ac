"""Required actions: digests bind an answer to the exact call; answers must fit their calls."""

from datetime import UTC, datetime, timedelta

import pytest

from agentkit.domain import run as runs
from agentkit.domain.actions import (
    ActionKind,
    CallAnswer,
    Decision,
    PendingCall,
    RequiredAction,
    answer_call,
    call_digest,
)
from agentkit.domain.errors import ActionRefused, IllegalTransition
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.run import Run, RunStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)
APPROVE = CallAnswer(decision=Decision.APPROVE, answered_at=T0)
OUTPUT = CallAnswer(decision=Decision.OUTPUT, answered_at=T0, output="42")


def waiting(call_id: str, name: str, kind: ActionKind, **arguments: object) -> PendingCall:
    return PendingCall(
        call_id=ToolCallId(call_id), name=name, arguments=arguments, digest=call_digest(name, arguments), kind=kind
    )


ACTION = RequiredAction(
    calls=(waiting("c1", "transfer", ActionKind.APPROVAL, amount=5), waiting("c2", "pick", ActionKind.CLIENT_TOOL)),
    requested_at=T0,
    expires_at=T0 + timedelta(hours=1),
)


def test_the_digest_is_the_same_whatever_the_key_order_and_changes_with_any_argument() -> None:
    assert call_digest("t", {"a": 1, "b": {"x": 1, "y": 2}}) == call_digest("t", {"b": {"y": 2, "x": 1}, "a": 1})
    assert call_digest("t", {"a": 1}) != call_digest("t", {"a": 2})
    assert call_digest("t", {"a": 1}) != call_digest("u", {"a": 1})
    assert len(call_digest("t", {})) == 64


def test_an_approval_must_name_its_calls_digest() -> None:
    with pytest.raises(ActionRefused) as missing:
        answer_call(ACTION, ToolCallId("c1"), None, APPROVE)
    with pytest.raises(ActionRefused) as other:
        answer_call(ACTION, ToolCallId("c1"), call_digest("transfer", {"amount": 6}), APPROVE)

    assert (missing.value.code, other.value.code) == ("digest_mismatch", "digest_mismatch")


@pytest.mark.parametrize(
    ("call_id", "answer", "code"),
    [
        ("c9", APPROVE, "unknown_call"),
        ("c1", OUTPUT, "wrong_answer"),
        ("c2", APPROVE, "wrong_answer"),
    ],
)
def test_answers_that_do_not_fit_are_refused(call_id: str, answer: CallAnswer, code: str) -> None:
    digest = next((call.digest for call in ACTION.calls if call.call_id == call_id), None)
    with pytest.raises(ActionRefused) as refused:
        answer_call(ACTION, ToolCallId(call_id), digest, answer)
    assert refused.value.code == code


def test_a_call_is_answered_once() -> None:
    once = answer_call(ACTION, ToolCallId("c2"), None, OUTPUT)
    with pytest.raises(ActionRefused) as twice:
        answer_call(once, ToolCallId("c2"), None, OUTPUT)
    assert twice.value.code == "already_answered"
    assert once.answer_of(ToolCallId("c2")) == OUTPUT
    assert not once.answered


def test_the_last_answer_makes_the_run_claimable_at_once_and_a_pause_is_no_lost_attempt() -> None:
    run = Run(id=RunId("r"), owner=OwnerId("o"), goal="g", created_at=T0)
    running = runs.start(run, now=T0, lease_until=T0 + timedelta(seconds=30))
    paused = runs.pause(running, ACTION.calls, now=T0, until=T0 + timedelta(hours=1))
    later = T0 + timedelta(minutes=1)

    half = runs.give_answer(paused, ToolCallId("c2"), None, OUTPUT, now=later)
    whole = runs.give_answer(half, ToolCallId("c1"), ACTION.calls[0].digest, APPROVE, now=later)

    assert (paused.status, paused.expires_at, paused.pauses) == (RunStatus.REQUIRES_ACTION, T0 + timedelta(hours=1), 1)
    assert not runs.claimable(paused, now=later)
    assert half.status is RunStatus.REQUIRES_ACTION
    assert whole.status is RunStatus.RUNNING
    assert runs.claimable(whole, now=later)
    assert runs.claim(whole, now=later, lease_until=later).lost_attempts == 1  # the second executor; the first paused
    with pytest.raises(IllegalTransition):
        runs.give_answer(whole, ToolCallId("c1"), ACTION.calls[0].digest, APPROVE, now=later)
