"""The run state machine: every status pair, cancel semantics, leases, usage and goal validation."""

import itertools
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from agentkit.domain.actions import ActionKind, CallAnswer, Decision, PendingCall, RequiredAction, call_digest
from agentkit.domain.errors import IllegalTransition, InvalidGoal
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import Usage
from agentkit.domain.run import (
    ALLOWED_TRANSITIONS,
    Run,
    RunStatus,
    add_spend,
    end,
    expire,
    give_answer,
    pause,
    request_cancel,
    settle_child,
    start,
    succeed,
    validate_goal,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LATER = T0 + timedelta(seconds=5)
LEASE = T0 + timedelta(seconds=30)

S = RunStatus
# The state machine as documented in run.py, written out independently of ALLOWED_TRANSITIONS.
LEGAL = {
    (S.PENDING, S.RUNNING),
    (S.PENDING, S.CANCELLED),
    (S.PENDING, S.FAILED),
    (S.PENDING, S.EXPIRED),
    *((S.RUNNING, target) for target in S if target.is_terminal),
    (S.RUNNING, S.REQUIRES_ACTION),
    (S.REQUIRES_ACTION, S.RUNNING),
    (S.REQUIRES_ACTION, S.CANCELLED),
    (S.REQUIRES_ACTION, S.EXPIRED),
    (S.RUNNING, S.WAITING),
    (S.REQUIRES_ACTION, S.WAITING),
    (S.WAITING, S.RUNNING),
    (S.WAITING, S.CANCELLED),
    (S.WAITING, S.FAILED),
}
TERMINAL = [status for status in RunStatus if status.is_terminal]


WAITING_CALL = PendingCall(
    call_id=ToolCallId("call-1"),
    name="transfer",
    arguments={"amount": 5},
    digest=call_digest("transfer", {"amount": 5}),
    kind=ActionKind.APPROVAL,
)

CHILD_CALL = PendingCall(
    call_id=ToolCallId("call-2"),
    name="ask_math",
    arguments={"task": "2+2"},
    digest=call_digest("ask_math", {"task": "2+2"}),
    kind=ActionKind.CHILD_RUN,
    child_run_id=RunId("child-1"),
    agent="math",
)


def ended_child(status: RunStatus = RunStatus.SUCCEEDED) -> Run:
    """The child run of CHILD_CALL, ended."""
    child = Run(id=RunId("child-1"), owner=OwnerId("owner-1"), goal="2+2", created_at=T0, agent="math")
    running = start(child, now=T0, lease_until=LEASE)
    if status is RunStatus.SUCCEEDED:
        return succeed(running, now=LATER, answer="4")
    return end(running, status, now=LATER, reason="it broke")


def make_run(status: RunStatus = RunStatus.PENDING, *, attempt: int = 0) -> Run:
    action = None
    if status is RunStatus.WAITING:
        action = RequiredAction(calls=(CHILD_CALL,), requested_at=T0, expires_at=LEASE)
    if status is RunStatus.REQUIRES_ACTION:
        action = RequiredAction(calls=(WAITING_CALL,), requested_at=T0, expires_at=LEASE)
    return Run(
        id=RunId("run-1"),
        owner=OwnerId("owner-1"),
        goal="Say hi",
        created_at=T0,
        status=status,
        attempt=attempt,
        action=action,
    )


def move(run: Run, target: RunStatus) -> Run:
    """Drive a transition through the public function that reaches `target`."""
    if target is RunStatus.WAITING and run.status is RunStatus.REQUIRES_ACTION:
        assert run.action is not None
        mixed = msgspec.structs.replace(
            run, action=msgspec.structs.replace(run.action, calls=(*run.action.calls, CHILD_CALL))
        )
        approval = CallAnswer(decision=Decision.APPROVE, answered_at=LATER)
        return give_answer(mixed, WAITING_CALL.call_id, WAITING_CALL.digest, approval, now=LATER)
    if target is RunStatus.WAITING:
        return pause(run, (CHILD_CALL,), now=LATER, until=LEASE)
    if target is RunStatus.RUNNING and run.status is RunStatus.WAITING:
        return settle_child(run, ended_child(), now=LATER)
    if target is RunStatus.RUNNING and run.status is RunStatus.REQUIRES_ACTION:
        approval = CallAnswer(decision=Decision.APPROVE, answered_at=LATER)
        return give_answer(run, WAITING_CALL.call_id, WAITING_CALL.digest, approval, now=LATER)
    if target is RunStatus.RUNNING:
        return start(run, now=LATER, lease_until=LEASE)
    if target is RunStatus.REQUIRES_ACTION:
        return pause(run, (WAITING_CALL,), now=LATER, until=LEASE)
    if target is RunStatus.SUCCEEDED:
        return succeed(run, now=LATER, answer="hi")
    if target is RunStatus.EXPIRED:
        return expire(run, now=LATER)
    # No function moves a run back to pending; `end` is the only door and it refuses non-terminal targets.
    return end(run, target, now=LATER, reason="because")


def test_allowed_transitions_match_the_documented_state_machine() -> None:
    table = {(current, target) for current, targets in ALLOWED_TRANSITIONS.items() for target in targets}
    assert table == LEGAL
    assert set(ALLOWED_TRANSITIONS) == set(RunStatus)


@pytest.mark.parametrize(
    ("current", "target"),
    [pair for pair in itertools.product(RunStatus, RunStatus) if pair in LEGAL],
    ids=lambda status: status.value,
)
def test_legal_transition_moves_the_run(current: RunStatus, target: RunStatus) -> None:
    run = make_run(current)
    moved = move(run, target)
    assert moved.status is target
    assert run.status is current  # the original value is untouched


@pytest.mark.parametrize(
    ("current", "target"),
    [pair for pair in itertools.product(RunStatus, RunStatus) if pair not in LEGAL],
    ids=lambda status: status.value,
)
def test_illegal_transition_raises(current: RunStatus, target: RunStatus) -> None:
    with pytest.raises(IllegalTransition) as info:
        move(make_run(current), target)
    assert info.value.current == current.value
    assert info.value.target == target.value


@pytest.mark.parametrize("status", TERMINAL, ids=str)
def test_terminal_run_never_changes(status: RunStatus) -> None:
    run = make_run(status)
    for target in RunStatus:
        with pytest.raises(IllegalTransition):
            move(run, target)


def test_start_takes_the_lease_and_counts_the_attempt() -> None:
    started = start(make_run(attempt=2), now=LATER, lease_until=LEASE)
    assert started.attempt == 3
    assert started.started_at == LATER
    assert started.heartbeat_at == LATER
    assert started.expires_at == LEASE


def test_first_start_is_attempt_one() -> None:
    assert start(make_run(), now=LATER).attempt == 1


def test_succeed_records_the_answer_and_drops_the_lease() -> None:
    running = start(make_run(), now=T0, lease_until=LEASE)
    done = succeed(running, now=LATER, answer="hello", output={"greeting": "hello"})
    assert (done.answer, done.output) == ("hello", {"greeting": "hello"})
    assert (done.finished_at, done.expires_at) == (LATER, None)
    assert done.is_terminal


def test_end_records_the_reason_and_no_answer() -> None:
    running = start(make_run(), now=T0, lease_until=LEASE)
    ended = end(running, RunStatus.MAX_STEPS_EXCEEDED, now=LATER, reason="too many steps")
    assert ended.status is RunStatus.MAX_STEPS_EXCEEDED
    assert (ended.failure_reason, ended.answer, ended.finished_at, ended.expires_at) == (
        "too many steps",
        None,
        LATER,
        None,
    )
    assert ended.cancel_requested is False


@pytest.mark.parametrize("status", [RunStatus.PENDING, RunStatus.RUNNING])
def test_a_cancelled_run_shows_the_cancel_was_requested(status: RunStatus) -> None:
    run = make_run() if status is RunStatus.PENDING else start(make_run(), now=T0)
    cancelled = end(run, RunStatus.CANCELLED, now=LATER, reason="cancelled on request")
    assert (cancelled.status, cancelled.cancel_requested) == (RunStatus.CANCELLED, True)


def test_end_refuses_succeeded_because_success_needs_an_answer() -> None:
    running = start(make_run(), now=T0)
    with pytest.raises(IllegalTransition):
        end(running, RunStatus.SUCCEEDED, now=LATER, reason="done")


def test_expire_says_the_worker_was_lost() -> None:
    expired = expire(start(make_run(), now=T0, lease_until=LEASE), now=LATER)
    assert expired.status is RunStatus.EXPIRED
    assert expired.failure_reason == "worker_lost"


def test_request_cancel_on_pending_cancels_at_once() -> None:
    cancelled = request_cancel(make_run(), now=LATER)
    assert cancelled.status is RunStatus.CANCELLED
    assert cancelled.finished_at == LATER
    assert cancelled.failure_reason == "cancelled before it started"


def test_request_cancel_on_running_only_sets_the_flag() -> None:
    running = start(make_run(), now=T0, lease_until=LEASE)
    flagged = request_cancel(running, now=LATER)
    assert flagged.status is RunStatus.RUNNING
    assert flagged.cancel_requested is True
    assert flagged.finished_at is None
    # The executor then ends it at its next step boundary.
    assert end(flagged, RunStatus.CANCELLED, now=LATER, reason="cancelled").status is RunStatus.CANCELLED


def test_request_cancel_on_cancelled_changes_nothing() -> None:
    cancelled = request_cancel(make_run(), now=T0)
    again = request_cancel(cancelled, now=LATER)
    assert again == cancelled
    assert again.status is RunStatus.CANCELLED


@pytest.mark.parametrize("status", [s for s in TERMINAL if s is not RunStatus.CANCELLED], ids=str)
def test_request_cancel_on_other_terminal_status_raises(status: RunStatus) -> None:
    with pytest.raises(IllegalTransition) as info:
        request_cancel(make_run(status), now=LATER)
    assert info.value.target == "cancelled"


def test_cancelled_never_flips_back() -> None:
    cancelled = request_cancel(make_run(), now=T0)
    with pytest.raises(IllegalTransition):
        start(cancelled, now=LATER)
    with pytest.raises(IllegalTransition):
        succeed(cancelled, now=LATER, answer="late answer")


def test_add_spend_accumulates_tokens_and_known_costs() -> None:
    run = add_spend(make_run(), Usage(input_tokens=10, output_tokens=3), 0.25)
    run = add_spend(run, Usage(input_tokens=5, output_tokens=2), None)
    assert (run.input_tokens, run.output_tokens, run.cost_usd) == (15, 5, 0.25)


@pytest.mark.parametrize("goal", ["", "   ", "\n\t "], ids=["empty", "spaces", "whitespace"])
def test_validate_goal_rejects_an_empty_goal(goal: str) -> None:
    with pytest.raises(InvalidGoal, match="empty"):
        validate_goal(goal, max_chars=10)


def test_validate_goal_rejects_a_goal_over_the_limit() -> None:
    with pytest.raises(InvalidGoal, match="11 characters long; the limit is 10"):
        validate_goal("x" * 11, max_chars=10)


def test_validate_goal_strips_and_measures_the_stripped_text() -> None:
    assert validate_goal("  " + "x" * 10 + "\n", max_chars=10) == "x" * 10


def test_a_run_that_calls_another_agent_waits_and_its_childs_end_answers_the_call() -> None:
    running = start(make_run(), now=T0, lease_until=LEASE)
    waiting = pause(running, (CHILD_CALL,), now=T0, until=LEASE)
    child = msgspec.structs.replace(
        add_spend(ended_child(), Usage(input_tokens=7, output_tokens=3), 0.5), output={"value": 4}
    )

    settled = settle_child(waiting, child, now=LATER)

    assert waiting.status is RunStatus.WAITING
    assert not waiting.is_at_rest  # its children work for it: a wait for its end goes on
    assert not waiting.is_terminal
    assert settled.status is RunStatus.RUNNING
    assert settled.expires_at == LATER  # claimable at once
    assert settled.action is not None
    answer = settled.action.answer_of(CHILD_CALL.call_id)
    assert answer is not None
    assert (answer.decision, answer.output) == (Decision.OUTPUT, '{"value":4}')
    assert (settled.tree_input_tokens, settled.tree_output_tokens, settled.tree_cost_usd) == (7, 3, 0.5)


def test_a_child_that_failed_answers_with_how_it_ended() -> None:
    waiting = make_run(RunStatus.WAITING)

    settled = settle_child(waiting, ended_child(RunStatus.FAILED), now=LATER)

    assert settled.action is not None
    answer = settled.action.answer_of(CHILD_CALL.call_id)
    assert answer is not None
    assert answer.decision is Decision.FAIL
    assert answer.reason == "the agent 'math' (run child-1) ended failed: it broke"


def test_a_client_cannot_answer_a_call_a_child_run_answers() -> None:
    waiting = make_run(RunStatus.WAITING)
    given = CallAnswer(decision=Decision.OUTPUT, answered_at=LATER, output="forged")

    with pytest.raises(IllegalTransition):
        give_answer(waiting, CHILD_CALL.call_id, None, given, now=LATER)


def test_a_waiting_run_is_cancelled_at_once() -> None:
    cancelled = request_cancel(make_run(RunStatus.WAITING), now=LATER)

    assert cancelled.status is RunStatus.CANCELLED
    assert cancelled.failure_reason == "cancelled while it waited on its child runs"
