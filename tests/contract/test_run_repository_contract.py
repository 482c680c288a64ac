"""RunRepository contract: the in-memory and the Postgres repository behave alike."""

import uuid
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from agentkit.application.errors import IdempotencyConflict, StaleAttempt
from agentkit.application.ports.run_repository import cursor_of
from agentkit.domain import run as runs
from agentkit.domain.actions import ActionKind, CallAnswer, Decision, PendingCall, call_digest
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.messages import Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.tools import ToolSchema
from tests.contract.conftest import StateKit

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
OWNER = OwnerId("key-1")


def new_run(**changes: object) -> Run:
    """A pending run with a fresh UUID id."""
    run = Run(id=RunId(str(uuid.uuid4())), owner=OWNER, goal="add 2 and 3", created_at=T0)
    return msgspec.structs.replace(run, **changes)


def finished(at: datetime, **changes: object) -> Run:
    """A run that succeeded at `at`."""
    started = runs.start(new_run(**changes), now=at - timedelta(seconds=5), lease_until=at + timedelta(seconds=30))
    return runs.succeed(started, now=at, answer="5")


async def test_a_run_reads_back_exactly_as_it_was_written(kit: StateKit) -> None:
    run = new_run(
        session_id=SessionId("chat:1"),
        output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}},
        max_steps=7,
        idempotency_key="idem-1",
        request_fingerprint="sha256:abc",
    )
    run = runs.add_spend(runs.start(run, now=T0, lease_until=T0 + timedelta(seconds=30)), Usage(input_tokens=12), None)
    run = runs.succeed(run, now=T0 + timedelta(seconds=2), answer="5", output={"sum": 5, "parts": [2, 3]})

    await kit.runs.add(run)

    assert await kit.runs.get(run.id) == run


async def test_an_unknown_id_is_none_also_when_it_is_not_a_uuid(kit: StateKit) -> None:
    assert await kit.runs.get(RunId(str(uuid.uuid4()))) is None
    assert await kit.runs.get(RunId("not-a-uuid")) is None
    await kit.runs.request_cancel(RunId("not-a-uuid"))


async def test_an_idempotency_key_belongs_to_one_run_per_owner(kit: StateKit) -> None:
    first = new_run(idempotency_key="k", request_fingerprint="f1")
    await kit.runs.add(first)

    with pytest.raises(IdempotencyConflict):
        await kit.runs.add(new_run(idempotency_key="k"))
    other_owner = new_run(owner=OwnerId("key-2"), idempotency_key="k")
    await kit.runs.add(other_owner)

    assert await kit.runs.get_by_idempotency_key(OWNER, "k") == first
    assert await kit.runs.get_by_idempotency_key(OwnerId("key-2"), "k") == other_owner
    assert await kit.runs.get_by_idempotency_key(OWNER, "other") is None


async def test_save_replaces_the_run(kit: StateKit) -> None:
    run = new_run()
    await kit.runs.add(run)
    started = runs.start(run, now=T0, lease_until=T0 + timedelta(seconds=30))

    await kit.runs.save(started)

    assert await kit.runs.get(run.id) == started


async def test_a_write_from_a_stale_attempt_is_refused_and_changes_nothing(kit: StateKit) -> None:
    run = new_run()
    await kit.runs.add(run)
    first = runs.start(run, now=T0, lease_until=T0 + timedelta(seconds=30))
    second = msgspec.structs.replace(first, attempt=2, heartbeat_at=T0 + timedelta(seconds=40))
    await kit.runs.save(second)

    with pytest.raises(StaleAttempt):
        await kit.runs.save(runs.succeed(first, now=T0 + timedelta(seconds=50), answer="late"))

    assert await kit.runs.get(run.id) == second


async def test_a_cancel_request_survives_the_executors_next_save(kit: StateKit) -> None:
    run = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30))
    await kit.runs.add(run)

    await kit.runs.request_cancel(run.id)
    # the executor's next save carries the version it holds, which knows nothing of the cancel
    await kit.runs.save(msgspec.structs.replace(run, heartbeat_at=T0 + timedelta(seconds=5)))

    stored = await kit.runs.get(run.id)
    assert stored is not None
    assert stored.cancel_requested
    assert stored.heartbeat_at == T0 + timedelta(seconds=5)


async def test_only_a_running_run_takes_a_cancel_flag(kit: StateKit) -> None:
    pending = new_run()
    done = finished(T0)
    await kit.runs.add(pending)
    await kit.runs.add(done)

    await kit.runs.request_cancel(pending.id)
    await kit.runs.request_cancel(done.id)

    assert await kit.runs.get(pending.id) == pending
    assert await kit.runs.get(done.id) == done


async def test_lapsed_finds_unfinished_runs_whose_lease_expired(kit: StateKit) -> None:
    lapsed = [runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=s)) for s in (10, 20)]
    live = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=120))
    no_lease = new_run()
    done = finished(T0 + timedelta(seconds=1))
    for run in (*lapsed, live, no_lease, done):
        await kit.runs.add(run)

    found = await kit.runs.lapsed(T0 + timedelta(seconds=60))

    assert sorted(r.id for r in found) == sorted(r.id for r in lapsed)
    assert len(await kit.runs.lapsed(T0 + timedelta(seconds=60), limit=1)) == 1


async def test_delete_finished_before_deletes_only_runs_that_ended_before_the_cutoff(kit: StateKit) -> None:
    old = [finished(T0, idempotency_key=f"old-{i}") for i in range(3)]
    recent = finished(T0 + timedelta(days=2))
    unfinished = runs.start(new_run(created_at=T0 - timedelta(days=9)), now=T0, lease_until=T0)
    for run in (*old, recent, unfinished):
        await kit.runs.add(run)

    deleted = await kit.runs.delete_finished_before(T0 + timedelta(days=1))

    assert deleted == 3
    assert [await kit.runs.get(r.id) for r in old] == [None, None, None]
    assert await kit.runs.get(recent.id) == recent
    assert await kit.runs.get(unfinished.id) == unfinished
    # The key of a deleted run is free again.
    await kit.runs.add(new_run(idempotency_key="old-0"))


async def test_a_run_that_ended_cannot_be_moved_to_another_ending(kit: StateKit) -> None:
    running = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30))
    await kit.runs.add(running)
    expired = runs.expire(running, now=T0 + timedelta(seconds=60))
    await kit.runs.save(expired)

    with pytest.raises(StaleAttempt):
        await kit.runs.save(runs.succeed(running, now=T0 + timedelta(seconds=61), answer="too late"))
    await kit.runs.save(expired)  # the same ending again is harmless

    assert await kit.runs.get(running.id) == expired


async def test_renew_leases_extends_only_unfinished_runs(kit: StateKit) -> None:
    running = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30))
    done = finished(T0)
    for run in (running, done):
        await kit.runs.add(run)
    later, until = T0 + timedelta(seconds=20), T0 + timedelta(seconds=50)

    await kit.runs.renew_leases([running.id, done.id, RunId(str(uuid.uuid4())), RunId("nope")], now=later, until=until)
    await kit.runs.renew_leases([], now=later, until=until)

    assert await kit.runs.get(running.id) == msgspec.structs.replace(running, heartbeat_at=later, expires_at=until)
    assert await kit.runs.get(done.id) == done


async def test_renew_leases_says_which_runs_are_to_cancel(kit: StateKit) -> None:
    to_cancel, going_on = (runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30)) for _ in range(2))
    for run in (to_cancel, going_on):
        await kit.runs.add(run)
    await kit.runs.request_cancel(to_cancel.id)

    cancelled = await kit.runs.renew_leases(
        [to_cancel.id, going_on.id], now=T0 + timedelta(seconds=10), until=T0 + timedelta(seconds=40)
    )

    assert cancelled == {to_cancel.id}
    assert await kit.runs.renew_leases([], now=T0, until=T0) == set()


async def test_expire_lapsed_ends_lapsed_runs_once_and_leaves_renewed_ones(kit: StateKit) -> None:
    lapsed = [runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=s)) for s in (10, 20, 30)]
    renewed = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=10))
    for run in (*lapsed, renewed):
        await kit.runs.add(run)
    now = T0 + timedelta(seconds=60)
    await kit.runs.renew_leases([renewed.id], now=now, until=now + timedelta(seconds=30))

    first = await kit.runs.expire_lapsed(now, reason="worker_lost", limit=2)
    rest = await kit.runs.expire_lapsed(now, reason="worker_lost")

    assert [r.id for r in first] == [lapsed[0].id, lapsed[1].id]
    assert [r.id for r in rest] == [lapsed[2].id]
    assert await kit.runs.expire_lapsed(now, reason="worker_lost") == []
    for run in (*first, *rest):
        assert run == runs.expire(next(r for r in lapsed if r.id == run.id), now=now, reason="worker_lost")
        assert await kit.runs.get(run.id) == run
    stored = await kit.runs.get(renewed.id)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING


async def test_claim_starts_a_pending_run_and_resumes_a_running_one_under_a_new_attempt(kit: StateKit) -> None:
    pending = new_run()
    await kit.runs.add(pending)
    until = T0 + timedelta(seconds=30)

    started = await kit.runs.claim(pending.id, attempt=0, now=T0, until=until)

    assert started == runs.start(pending, now=T0, lease_until=until)
    assert await kit.runs.get(pending.id) == started
    later, later_until = T0 + timedelta(seconds=90), T0 + timedelta(seconds=120)
    resumed = await kit.runs.claim(pending.id, attempt=1, now=later, until=later_until)
    assert resumed == runs.resume(started, now=later, lease_until=later_until)
    assert resumed.attempt == 2
    assert resumed.started_at == T0  # the run started once; it was resumed after


async def test_of_two_executors_claiming_one_run_only_one_wins(kit: StateKit) -> None:
    run = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=10))
    done = finished(T0)
    for stored in (run, done):
        await kit.runs.add(stored)
    now, until = T0 + timedelta(seconds=60), T0 + timedelta(seconds=90)

    first = await kit.runs.claim(run.id, attempt=1, now=now, until=until)
    second = await kit.runs.claim(run.id, attempt=1, now=now, until=until)

    assert first is not None
    assert first.attempt == 2
    assert second is None
    assert await kit.runs.claim(done.id, attempt=done.attempt, now=now, until=until) is None
    assert await kit.runs.claim(RunId("not-a-uuid"), attempt=0, now=now, until=until) is None
    with pytest.raises(StaleAttempt):
        await kit.runs.save(runs.succeed(run, now=now, answer="from the executor that lost the run"))


async def test_lapsed_pages_by_keyset_reading_each_run_once(kit: StateKit) -> None:
    lapsed = [runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=s % 4)) for s in range(10)]
    for run in lapsed:
        await kit.runs.add(run)
    now = T0 + timedelta(seconds=60)

    seen: list[RunId] = []
    page = await kit.runs.lapsed(now, limit=3)
    while page:
        seen.extend(r.id for r in page)
        page = await kit.runs.lapsed(now, limit=3, after=cursor_of(page[-1]))

    assert sorted(seen) == sorted(r.id for r in lapsed)
    assert len(seen) == len(set(seen))


async def test_expire_lapsed_can_spare_runs_not_yet_taken_often_enough(kit: StateKit) -> None:
    once = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=10))
    thrice = msgspec.structs.replace(once, id=RunId(str(uuid.uuid4())), attempt=3)
    for run in (once, thrice):
        await kit.runs.add(run)

    expired = await kit.runs.expire_lapsed(T0 + timedelta(seconds=60), reason="worker_lost", min_attempt=3)

    assert [r.id for r in expired] == [thrice.id]
    stored = await kit.runs.get(once.id)
    assert stored is not None
    assert stored.status is RunStatus.RUNNING


async def test_the_calls_in_progress_read_back_and_are_cleared_by_a_save(kit: StateKit) -> None:
    batch = (ToolCallId("call_7"), ToolCallId("call_8"), ToolCallId("call_9"))
    run = runs.mark_calling(runs.start(new_run(), now=T0, lease_until=T0), batch)
    await kit.runs.add(run)

    assert await kit.runs.get(run.id) == run
    done = runs.mark_calling(run, ())
    await kit.runs.save(done)
    stored = await kit.runs.get(run.id)
    assert stored is not None
    assert stored.calling == ()


async def test_a_run_whose_executor_still_holds_its_lease_is_not_claimed(kit: StateKit) -> None:
    live = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30))
    await kit.runs.add(live)

    taken = await kit.runs.claim(live.id, attempt=1, now=T0 + timedelta(seconds=10), until=T0 + timedelta(seconds=40))

    assert taken is None
    assert await kit.runs.get(live.id) == live
    handed = runs.hand_back(live, now=T0 + timedelta(seconds=10))
    await kit.runs.save(handed)
    resumed = await kit.runs.claim(live.id, attempt=1, now=T0 + timedelta(seconds=10), until=T0 + timedelta(seconds=40))
    assert resumed is not None
    assert resumed.attempt == 2


def paused_run(*, until: datetime = T0 + timedelta(hours=1), **changes: object) -> Run:
    """A run that paused on two calls: an approval and a client tool's output."""
    calls = (
        PendingCall(
            call_id=ToolCallId("c1"),
            name="transfer",
            arguments={"amount": 5, "to": {"iban": "X"}},
            digest=call_digest("transfer", {"amount": 5, "to": {"iban": "X"}}),
            kind=ActionKind.APPROVAL,
        ),
        PendingCall(
            call_id=ToolCallId("c2"),
            name="pick",
            arguments={},
            digest=call_digest("pick", {}),
            kind=ActionKind.CLIENT_TOOL,
        ),
    )
    started = runs.start(new_run(**changes), now=T0, lease_until=T0 + timedelta(seconds=30))
    return runs.pause(started, calls, now=T0, until=until)


async def test_a_paused_run_reads_back_with_its_calls_and_answers(kit: StateKit) -> None:
    run = paused_run(
        approval_required=("transfer",),
        client_tools=(ToolSchema(name="pick", description="Pick one", parameters={"type": "object"}),),
        callback_url="https://hooks.example/agentkit",
    )
    await kit.runs.add(run)
    approval = CallAnswer(decision=Decision.APPROVE, answered_at=T0 + timedelta(seconds=1), reason="fine")
    answered = runs.give_answer(run, ToolCallId("c1"), run.action.calls[0].digest, approval, now=T0)  # type: ignore[union-attr]

    assert await kit.runs.get(run.id) == run
    assert await kit.runs.save_answer(answered, expected=run.action)  # type: ignore[arg-type]
    assert await kit.runs.get(run.id) == answered
    assert answered.status is RunStatus.REQUIRES_ACTION
    assert run.pauses == 1


async def test_of_two_answers_given_at_once_the_second_is_told_to_look_again(kit: StateKit) -> None:
    run = paused_run()
    await kit.runs.add(run)
    assert run.action is not None
    at = T0 + timedelta(seconds=1)
    approve = runs.give_answer(
        run, ToolCallId("c1"), run.action.calls[0].digest, CallAnswer(decision=Decision.APPROVE, answered_at=at), now=at
    )
    output = runs.give_answer(
        run, ToolCallId("c2"), None, CallAnswer(decision=Decision.OUTPUT, answered_at=at, output="b"), now=at
    )

    assert await kit.runs.save_answer(approve, expected=run.action)
    assert not await kit.runs.save_answer(output, expected=run.action)  # it read the action before the approval

    stored = await kit.runs.get(run.id)
    assert stored is not None
    assert stored.action is not None
    both = runs.give_answer(
        stored, ToolCallId("c2"), None, CallAnswer(decision=Decision.OUTPUT, answered_at=at, output="b"), now=at
    )
    assert both.status is RunStatus.RUNNING
    assert await kit.runs.save_answer(both, expected=stored.action)
    resumed = await kit.runs.claim(run.id, attempt=run.attempt, now=at, until=at + timedelta(seconds=30))
    assert resumed is not None
    assert resumed.attempt == run.attempt + 1
    assert resumed.action == both.action  # the executor finds every answer


async def test_an_unanswered_paused_run_expires_at_its_deadline_and_is_never_renewed(kit: StateKit) -> None:
    deadline = T0 + timedelta(minutes=5)
    soon, later = paused_run(until=deadline), paused_run(until=deadline + timedelta(hours=1))
    for run in (soon, later):
        await kit.runs.add(run)

    renewed = await kit.runs.renew_leases([soon.id], now=T0, until=T0 + timedelta(days=1))
    lapsed = await kit.runs.lapsed(deadline + timedelta(seconds=1))
    expired = await kit.runs.expire_unanswered(deadline + timedelta(seconds=1), reason="unanswered")

    assert renewed == set()
    assert lapsed == []  # a paused run has no executor to lose
    assert [run.id for run in expired] == [soon.id]
    stored = await kit.runs.get(soon.id)
    assert stored is not None
    assert (stored.status, stored.failure_reason) == (RunStatus.EXPIRED, "unanswered")
    assert (await kit.runs.get(later.id)) == later


async def test_a_paused_run_is_cancelled_by_a_save(kit: StateKit) -> None:
    run = paused_run()
    await kit.runs.add(run)

    cancelled = runs.request_cancel(run, now=T0 + timedelta(seconds=1))
    await kit.runs.save(cancelled)

    stored = await kit.runs.get(run.id)
    assert stored is not None
    assert stored.status is RunStatus.CANCELLED
    assert not await kit.runs.save_answer(run, expected=run.action)  # type: ignore[arg-type]


async def test_attempts_that_ended_in_a_pause_do_not_count_as_lost_executors(kit: StateKit) -> None:
    # taken three times, paused twice: one executor was lost, so the run is not expired at 3 attempts
    run = msgspec.structs.replace(
        runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=1)), attempt=3, pauses=2
    )
    await kit.runs.add(run)

    expired = await kit.runs.expire_lapsed(T0 + timedelta(minutes=1), reason="worker_lost", min_attempt=3)

    assert expired == []
    assert [lapsed.id for lapsed in await kit.runs.lapsed(T0 + timedelta(minutes=1))] == [run.id]


def waiting_run(*, until: datetime, children: tuple[RunId, ...]) -> Run:
    """A running run that called other agents: it waits on one child run per call."""
    calls = tuple(
        PendingCall(
            call_id=ToolCallId(f"c{n}"),
            name="ask_math",
            arguments={"task": f"task {n}"},
            digest=call_digest("ask_math", {"task": f"task {n}"}),
            kind=ActionKind.CHILD_RUN,
            child_run_id=child,
            agent="math",
        )
        for n, child in enumerate(children)
    )
    started = runs.start(new_run(), now=T0, lease_until=T0 + timedelta(seconds=30))
    return runs.pause(started, calls, now=T0, until=until, turn_step=1)


def child_of(parent: Run, call: int, **changes: object) -> Run:
    """A child run of `parent`'s call number `call`, as the parent's action names it."""
    assert parent.action is not None
    pending = parent.action.calls[call]
    assert pending.child_run_id is not None
    linked: dict[str, object] = {
        "id": pending.child_run_id,
        "parent_run_id": parent.id,
        "parent_call_id": pending.call_id,
        "parent_step_no": 1,
        "lineage": ("default",),
        "agent": "math",
    }
    return new_run(**(linked | changes))


async def test_a_child_run_reads_back_with_its_parent_and_lineage(kit: StateKit) -> None:
    parent = waiting_run(until=T0 + timedelta(seconds=30), children=(RunId(str(uuid.uuid4())),))
    await kit.runs.add(parent)
    child = child_of(parent, 0, lineage=("default", "triage"))
    await kit.runs.add(child)

    assert await kit.runs.get(parent.id) == parent
    assert await kit.runs.get(child.id) == child
    assert parent.status is RunStatus.WAITING
    assert (await kit.runs.get(child.id)).depth == 2  # type: ignore[union-attr]


async def test_children_lists_a_runs_child_runs_oldest_first(kit: StateKit) -> None:
    ids = (RunId(str(uuid.uuid4())), RunId(str(uuid.uuid4())))
    parent = waiting_run(until=T0 + timedelta(seconds=30), children=ids)
    await kit.runs.add(parent)
    second = child_of(parent, 1, created_at=T0 + timedelta(seconds=2))
    first = child_of(parent, 0, created_at=T0 + timedelta(seconds=1))
    for child in (second, first):
        await kit.runs.add(child)
    await kit.runs.add(new_run())

    assert [child.id for child in await kit.runs.children(parent.id)] == [first.id, second.id]
    assert await kit.runs.children(first.id) == []
    assert await kit.runs.children(RunId("not-a-uuid")) == []


async def test_a_child_runs_end_answers_its_parent_and_adds_its_usage(kit: StateKit) -> None:
    ids = (RunId(str(uuid.uuid4())), RunId(str(uuid.uuid4())))
    parent = waiting_run(until=T0 + timedelta(seconds=30), children=ids)
    await kit.runs.add(parent)
    at = T0 + timedelta(seconds=3)
    done = runs.add_spend(
        runs.start(child_of(parent, 0), now=T0, lease_until=at), Usage(input_tokens=10, output_tokens=4), 0.25
    )
    done = runs.succeed(done, now=at, answer="42", output={"value": 42})
    failed = runs.end(runs.start(child_of(parent, 1), now=T0, lease_until=at), RunStatus.FAILED, now=at, reason="boom")

    one = runs.settle_child(parent, done, now=at)
    assert await kit.runs.save_answer(one, expected=parent.action)  # type: ignore[arg-type]
    stale = runs.settle_child(parent, failed, now=at)
    assert not await kit.runs.save_answer(stale, expected=parent.action)  # type: ignore[arg-type]
    stored = await kit.runs.get(parent.id)
    assert stored == one
    assert stored is not None
    assert stored.action is not None
    assert stored.status is RunStatus.WAITING
    both = runs.settle_child(stored, failed, now=at)
    assert await kit.runs.save_answer(both, expected=stored.action)

    final = await kit.runs.get(parent.id)
    assert final == both
    assert final is not None
    assert final.action is not None
    assert final.status is RunStatus.RUNNING
    assert (final.children_input_tokens, final.children_output_tokens, final.children_cost_usd) == (10, 4, 0.25)
    assert (final.children_turns, final.tree_turns) == (1, 1)  # the tree's steps (max_steps counts them)
    assert (final.tree_input_tokens, final.tree_cost_usd) == (10, 0.25)
    answers = [call.answer for call in final.action.calls]
    assert [answer.decision for answer in answers if answer] == [Decision.OUTPUT, Decision.FAIL]
    assert answers[0] is not None
    assert answers[0].output == '{"value":42}'
    resumed = await kit.runs.claim(parent.id, attempt=parent.attempt, now=at, until=at + timedelta(seconds=30))
    assert resumed is not None


async def test_stalled_waits_are_waiting_runs_past_their_check_and_never_lapsed_or_renewed(kit: StateKit) -> None:
    check = T0 + timedelta(seconds=30)
    soon = waiting_run(until=check, children=(RunId(str(uuid.uuid4())),))
    later = waiting_run(until=check + timedelta(hours=1), children=(RunId(str(uuid.uuid4())),))
    for run in (soon, later):
        await kit.runs.add(run)
    after = check + timedelta(seconds=1)

    renewed = await kit.runs.renew_leases([soon.id], now=T0, until=T0 + timedelta(days=1))
    stalled = await kit.runs.stalled_waits(after)

    assert renewed == set()
    assert await kit.runs.lapsed(after) == []  # no executor to lose
    assert await kit.runs.expire_unanswered(after, reason="unanswered") == []  # nobody owes it an answer
    assert await kit.runs.expire_lapsed(after, reason="worker_lost") == []
    assert [run.id for run in stalled] == [soon.id]
    rechecked = runs.recheck_waiting(soon, until=after + timedelta(seconds=30))
    assert await kit.runs.save_answer(rechecked, expected=soon.action)  # type: ignore[arg-type]
    assert await kit.runs.stalled_waits(after) == []


async def test_a_waiting_run_is_cancelled_by_a_save(kit: StateKit) -> None:
    run = waiting_run(until=T0 + timedelta(seconds=30), children=(RunId(str(uuid.uuid4())),))
    await kit.runs.add(run)

    await kit.runs.save(runs.request_cancel(run, now=T0 + timedelta(seconds=1)))

    stored = await kit.runs.get(run.id)
    assert stored is not None
    assert (stored.status, stored.failure_reason) == (
        RunStatus.CANCELLED,
        "cancelled while it waited on its child runs",
    )
    assert await kit.runs.stalled_waits(T0 + timedelta(days=1)) == []
