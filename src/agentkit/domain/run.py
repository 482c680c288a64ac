"""The run aggregate and its status state machine.

    pending ──▶ running ──▶ succeeded | failed | refused | max_steps_exceeded | timed_out | cancelled
       │         │  ▲  ▲
       │         └──┘  └──── requires_action ──▶ cancelled | expired (unanswered within APPROVAL_TTL_S)
       │   resumed: another executor    ▲ │
       │   takes it over                └─┘ paused: calls wait on an approval or a client tool's output;
       ├──▶ cancelled, failed                answered, the run goes on from its stored steps
       └───────────┴──▶ expired   (no executor within the lease, MAX_RUN_ATTEMPTS times)

    running ──▶ waiting ──▶ running     calls of other agents: each a child run, whose end answers it
                   └──────▶ cancelled | failed

Terminal statuses never change again. A run in `requires_action` or `waiting` holds no executor and no lease:
it waits on the answers to its pending calls (see `domain.actions`), and goes back to `running`,
claimable at once, when the last one is given. Cancel is a request: a pending run is cancelled at once, a
running run gets `cancel_requested` and ends `cancelled` at its next step boundary.

Every executor that takes a run (the first, or one resuming it after the last one died) claims it
under a new `attempt`; writes from an older attempt are refused (fencing). Before tools that are not
idempotent start (the calls of one model turn may run at once), the run records their calls in
`calling`: an executor resuming the run that finds such a call without a stored result knows it may
have run, and does not run it again.
"""

import re
from datetime import datetime
from enum import StrEnum
from typing import Any

import msgspec

from agentkit.domain.actions import CallAnswer, Decision, PendingCall, RequiredAction, answer_call, answer_child_call
from agentkit.domain.errors import IllegalTransition, InvalidGoal
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.messages import Usage
from agentkit.domain.tools import ToolSchema

# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class RunStatus(StrEnum):
    """Every status a run can have."""

    PENDING = "pending"
    RUNNING = "running"
    REQUIRES_ACTION = "requires_action"
    WAITING = "waiting"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REFUSED = "refused"
    MAX_STEPS_EXCEEDED = "max_steps_exceeded"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    EXPIRED = "expired"

    @property
    def is_terminal(self) -> bool:
        """Whether the run has ended for good."""
        return self not in _UNFINISHED  # a set, not a tuple of members: each `RunStatus.X` is a lookup

    @property
    def is_at_rest(self) -> bool:
        """Whether nothing moves the run on but its client: it ended, or waits on an answer (`requires_action`).

        A run `waiting` on its child runs is not at rest: they work for it (a wait for its end goes on).
        """
        return self not in _MOVING


_UNFINISHED = frozenset({RunStatus.PENDING, RunStatus.RUNNING, RunStatus.REQUIRES_ACTION, RunStatus.WAITING})
_MOVING = frozenset({RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING})


_ENDINGS_OF_RUNNING = frozenset(
    {
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.REFUSED,
        RunStatus.MAX_STEPS_EXCEEDED,
        RunStatus.TIMED_OUT,
        RunStatus.CANCELLED,
        RunStatus.EXPIRED,
        RunStatus.REQUIRES_ACTION,
        RunStatus.WAITING,
    }
)

ALLOWED_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.PENDING: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.EXPIRED}),
    RunStatus.RUNNING: _ENDINGS_OF_RUNNING,
    RunStatus.REQUIRES_ACTION: frozenset(
        {RunStatus.RUNNING, RunStatus.WAITING, RunStatus.CANCELLED, RunStatus.EXPIRED}
    ),
    # a waiting run ends early only by a cancel (its children's ends are its answers, failures included)
    RunStatus.WAITING: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED}),
    **{status: frozenset() for status in RunStatus if status.is_terminal},
}


class Run(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One agent run: a goal, its status, its answer and what it cost.

    Attributes:
        id: The run's id.
        owner: The id of the API key (or local user) that created it.
        session_id: The conversation it continues, if any.
        goal: What the user asked.
        status: Where it is in the state machine.
        answer: The final text answer.
        output: The structured final output when an output schema was asked for.
        output_schema: The JSON schema the final output must satisfy, if any.
        failure_reason: Why it did not succeed, in words a person understands.
        max_steps: The LLM turns this run may take.
        token_budget: The input plus output tokens this run may spend, if limited.
        input_tokens: Input tokens spent over all LLM calls.
        output_tokens: Output tokens spent over all LLM calls.
        cost_usd: What its LLM calls cost in US dollars: the sum of the calls whose price is known;
            None while no call's price is known (never 0 for want of a price).
        cost_budget: The US dollars this run may spend, if limited.
        created_at: When it was accepted.
        started_at: When an executor started it.
        finished_at: When it reached a terminal status.
        expires_at: When its lease lapses unless a heartbeat renews it.
        heartbeat_at: The last heartbeat of its executor.
        cancel_requested: Set when a cancel was asked for while it was running.
        idempotency_key: The client's Idempotency-Key, scoped to the owner.
        request_fingerprint: A hash of the request that carried the idempotency key.
        attempt: Incremented each time an executor takes it (starts or resumes it); stale attempts are
            fenced off.
        calling: The tool calls, of tools that are not idempotent, that may be running: recorded
            before they start (all those a turn starts at once), so a resumed run never repeats
            their side effects.
        agent: The name of the agent profile it runs with (`default` when none was named).
        agent_version: A digest of that profile as it was when the run was accepted.
        action: The calls it waits on while `requires_action`, with the answers given so far; kept
            until the answered turn's calls have run.
        pauses: How often it paused (an attempt that ends in a pause is no executor lost: see
            `lost_attempts`).
        approval_required: Names of tools whose calls need an approval in this run (besides the
            tools that always need one).
        client_tools: Tools the client runs itself: a call pauses the run until its output comes.
        callback_url: Where its webhooks go (on `requires_action` and on its terminal status).
        stream: The client asked to watch it as it is written: every LLM call streams, its fragments
            go to the run's event log (a run someone follows streams too, while they follow it).
        parent_run_id: The run whose call of this run's agent started it (a child run), if any.
        parent_call_id: That call's id.
        parent_step_no: The parent's LLM step that made the call.
        lineage: The agents of its ancestors, the root's first (empty for a root run): its depth in
            the tree, and the path a cycle is named by.
        children_input_tokens: Input tokens its ended child runs spent, theirs included (the tree's
            usage is its own plus this).
        children_output_tokens: The same for output tokens.
        children_cost_usd: The same for cost (None while no child's price is known).
        turns: The LLM calls the run made (its steps as `max_steps` counts them).
        children_turns: The LLM calls its ended child runs made, theirs included: the tree's steps
            count against the root's `max_steps`.
    """

    id: RunId
    owner: OwnerId
    goal: str
    session_id: SessionId | None = None
    status: RunStatus = RunStatus.PENDING
    answer: str | None = None
    output: Any = None
    output_schema: dict[str, Any] | None = None
    failure_reason: str | None = None
    max_steps: int = 10
    token_budget: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cost_budget: float | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    expires_at: datetime | None = None
    heartbeat_at: datetime | None = None
    cancel_requested: bool = False
    idempotency_key: str | None = None
    request_fingerprint: str | None = None
    attempt: int = 0
    calling: tuple[ToolCallId, ...] = ()
    agent: str = "default"
    agent_version: str | None = None
    action: RequiredAction | None = None
    pauses: int = 0
    approval_required: tuple[str, ...] = ()
    client_tools: tuple[ToolSchema, ...] = ()
    callback_url: str | None = None
    stream: bool = False
    parent_run_id: RunId | None = None
    parent_call_id: ToolCallId | None = None
    parent_step_no: int | None = None
    lineage: tuple[str, ...] = ()
    children_input_tokens: int = 0
    children_output_tokens: int = 0
    children_cost_usd: float | None = None
    turns: int = 0
    children_turns: int = 0

    @property
    def is_terminal(self) -> bool:
        """Whether the run has ended for good."""
        return self.status.is_terminal

    @property
    def is_at_rest(self) -> bool:
        """Whether nothing moves it on but its client: it ended, or waits on an answer."""
        return self.status.is_at_rest

    @property
    def depth(self) -> int:
        """How deep in its tree it is: 0 for a root run, 1 for its child, ..."""
        return len(self.lineage)

    @property
    def tree_input_tokens(self) -> int:
        """Input tokens spent by the run and its ended descendants."""
        return self.input_tokens + self.children_input_tokens

    @property
    def tree_output_tokens(self) -> int:
        """Output tokens spent by the run and its ended descendants."""
        return self.output_tokens + self.children_output_tokens

    @property
    def tree_turns(self) -> int:
        """The LLM calls made by the run and its ended descendants."""
        return self.turns + self.children_turns

    @property
    def tree_cost_usd(self) -> float | None:
        """What the run and its ended descendants cost (None while no price is known)."""
        if self.children_cost_usd is None:
            return self.cost_usd
        return (self.cost_usd or 0.0) + self.children_cost_usd

    @property
    def lost_attempts(self) -> int:
        """The attempts that ended without a pause or an end: executors that died (or handed it back)."""
        return self.attempt - self.pauses


# Not text anyone means: no store (PostgreSQL text), provider or terminal takes them.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


def validate_goal(goal: str, *, max_chars: int) -> str:
    """Return the goal stripped of surrounding space, or raise InvalidGoal.

    A goal is non-blank text of at most `max_chars` characters (after stripping), without U+0000
    and without lone surrogates.
    """
    stripped = goal.strip()
    if not stripped:
        raise InvalidGoal("the goal is empty")
    if len(stripped) > max_chars:
        raise InvalidGoal(f"the goal is {len(stripped)} characters long; the limit is {max_chars}")
    found = _NOT_TEXT.search(goal)
    if found is not None:
        raise InvalidGoal(f"the goal contains U+{ord(found.group()):04X} at character {found.start()}; it must be text")
    return stripped


def _move(run: Run, target: RunStatus, **changes: Any) -> Run:
    if target not in ALLOWED_TRANSITIONS[run.status]:
        raise IllegalTransition(run.status.value, target.value)
    return msgspec.structs.replace(run, status=target, **changes)


def start(run: Run, *, now: datetime, lease_until: datetime | None = None) -> Run:
    """pending → running: an executor takes the run and holds a lease on it."""
    return _move(
        run,
        RunStatus.RUNNING,
        started_at=now,
        heartbeat_at=now,
        expires_at=lease_until,
        attempt=run.attempt + 1,
    )


def resume(run: Run, *, now: datetime, lease_until: datetime) -> Run:
    """running → running under a new attempt: an executor takes over a run whose last executor died."""
    if run.status is not RunStatus.RUNNING:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    return msgspec.structs.replace(run, heartbeat_at=now, expires_at=lease_until, attempt=run.attempt + 1)


def claimable(run: Run, *, now: datetime) -> bool:
    """Whether an executor may take the run now: pending, or running with its lease lapsed (or given up).

    A run whose executor still renews its lease is never taken from it.
    """
    if run.status is RunStatus.PENDING:
        return True
    return run.status is RunStatus.RUNNING and (run.expires_at is None or run.expires_at <= now)


def claim(run: Run, *, now: datetime, lease_until: datetime) -> Run:
    """An executor takes the run: starts it when pending, resumes it when running."""
    if run.status is RunStatus.PENDING:
        return start(run, now=now, lease_until=lease_until)
    return resume(run, now=now, lease_until=lease_until)


def hand_back(run: Run, *, now: datetime) -> Run:
    """Give up a running run's lease (its executor is stopping) so another executor resumes it at once."""
    if run.status is not RunStatus.RUNNING:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    return msgspec.structs.replace(run, expires_at=now)


def pause(run: Run, calls: tuple[PendingCall, ...], *, now: datetime, until: datetime, turn_step: int = 0) -> Run:
    """running → requires_action (or waiting): these calls (of the turn of LLM step `turn_step`) wait on answers.

    The run gives up its lease. A call the client owes an answer makes it `requires_action`, and
    `until` the action's deadline: the sweeper ends a run nobody answered `expired`. Calls of other
    agents alone make it `waiting` on its child runs, and `until` when the sweeper looks at its
    children, in case an end was not passed on (their executors died between the two writes).
    """
    if not calls:
        raise ValueError("a run pauses on at least one call")
    action = RequiredAction(calls=calls, requested_at=now, expires_at=until, turn_step=turn_step)
    status = RunStatus.REQUIRES_ACTION if action.client_owes else RunStatus.WAITING
    return _move(run, status, action=action, expires_at=until, calling=(), pauses=run.pauses + 1)


def give_answer(run: Run, call_id: ToolCallId, digest: str | None, given: CallAnswer, *, now: datetime) -> Run:
    """Record the answer to one waiting call; with the last one, requires_action → running, claimable at once.

    Raises:
        IllegalTransition: the run does not wait on anything.
        ActionRefused: the answer does not fit the call (see `domain.actions.answer_call`).
    """
    if run.status is not RunStatus.REQUIRES_ACTION or run.action is None:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    return _answered(run, answer_call(run.action, call_id, digest, given), now=now)


def _answered(run: Run, action: RequiredAction, *, now: datetime) -> Run:
    if action.answered:
        # a lease that lapsed now: the next executor (any process) claims it and goes on from its steps
        return _move(run, RunStatus.RUNNING, action=action, expires_at=now)
    if run.status is RunStatus.REQUIRES_ACTION and not action.client_owes:
        return _move(run, RunStatus.WAITING, action=action)  # the client is done; child runs are not
    return msgspec.structs.replace(run, action=action)


def child_answer(child: Run, *, now: datetime) -> CallAnswer:
    """What an ended child run answers its parent's call: its answer (or typed output), or how it ended."""
    if child.status is RunStatus.SUCCEEDED:
        text = child.answer or ""
        if child.output is not None:
            text = msgspec.json.encode(child.output).decode()
        return CallAnswer(decision=Decision.OUTPUT, answered_at=now, output=text)
    why = f": {child.failure_reason}" if child.failure_reason else ""
    return CallAnswer(
        decision=Decision.FAIL,
        answered_at=now,
        reason=f"the agent {child.agent!r} (run {child.id}) ended {child.status.value}{why}",
    )


def settle_child(run: Run, child: Run, *, now: datetime) -> Run:
    """A child run ended: its end answers the call that started it, and its usage joins the run's tree usage.

    With the last answer the run goes back to `running`, claimable at once.

    Raises:
        IllegalTransition: the run waits on nothing (it ended, or was cancelled).
        ActionRefused: the call was answered already, or the run does not wait on this child.
    """
    if not child.is_terminal:
        raise IllegalTransition(child.status.value, "an answer to its parent")
    if run.status not in (RunStatus.WAITING, RunStatus.REQUIRES_ACTION) or run.action is None:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    action = answer_child_call(run.action, child.id, child_answer(child, now=now))
    child_cost = child.tree_cost_usd
    run = msgspec.structs.replace(
        run,
        children_input_tokens=run.children_input_tokens + child.tree_input_tokens,
        children_output_tokens=run.children_output_tokens + child.tree_output_tokens,
        children_cost_usd=run.children_cost_usd if child_cost is None else (run.children_cost_usd or 0.0) + child_cost,
        children_turns=run.children_turns + child.tree_turns,
    )
    return _answered(run, action, now=now)


def refuse_child(run: Run, child_run_id: RunId, reason: str, *, now: datetime) -> Run:
    """A call of another agent that starts no child run (a limit of the tree refused it): an error the model reads."""
    if run.status not in (RunStatus.WAITING, RunStatus.REQUIRES_ACTION) or run.action is None:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    refused = CallAnswer(decision=Decision.FAIL, answered_at=now, reason=reason)
    return _answered(run, answer_child_call(run.action, child_run_id, refused), now=now)


def recheck_waiting(run: Run, *, until: datetime) -> Run:
    """A waiting run whose children are still at work: the sweeper looks again at `until`."""
    if run.status is not RunStatus.WAITING:
        raise IllegalTransition(run.status.value, RunStatus.WAITING.value)
    return msgspec.structs.replace(run, expires_at=until)


def action_done(run: Run) -> Run:
    """The answered calls have run: the run no longer carries their answers."""
    return msgspec.structs.replace(run, action=None)


def hand_off(run: Run, *, agent: str, agent_version: str | None) -> Run:
    """The running run goes on as another agent's: its instructions, tools and model from here on."""
    if run.status is not RunStatus.RUNNING:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    return msgspec.structs.replace(run, agent=agent, agent_version=agent_version)


def mark_calling(run: Run, call_ids: tuple[ToolCallId, ...]) -> Run:
    """Record the calls of tools that are not idempotent as started (or, with none, that none is)."""
    return msgspec.structs.replace(run, calling=call_ids)


def add_spend(run: Run, usage: Usage, cost_usd: float | None) -> Run:
    """Add one LLM call's tokens and cost to the run's totals (a call whose price is unknown adds no cost)."""
    if cost_usd is None:
        return msgspec.structs.replace(
            run,
            input_tokens=run.input_tokens + usage.input_tokens,
            output_tokens=run.output_tokens + usage.output_tokens,
            turns=run.turns + 1,
        )
    return msgspec.structs.replace(
        run,
        input_tokens=run.input_tokens + usage.input_tokens,
        output_tokens=run.output_tokens + usage.output_tokens,
        cost_usd=(run.cost_usd or 0.0) + cost_usd,
        turns=run.turns + 1,
    )


def with_usage(run: Run, *, input_tokens: int, output_tokens: int, turns: int | None = None) -> Run:
    """The run with its token totals (and LLM calls) set (rebuilt from its stored steps when it resumes)."""
    if turns is None:
        return msgspec.structs.replace(run, input_tokens=input_tokens, output_tokens=output_tokens)
    return msgspec.structs.replace(run, input_tokens=input_tokens, output_tokens=output_tokens, turns=turns)


def succeed(run: Run, *, now: datetime, answer: str, output: Any = None) -> Run:
    """running → succeeded with the final answer (and structured output, if asked for)."""
    return _move(run, RunStatus.SUCCEEDED, finished_at=now, answer=answer, output=output, expires_at=None)


def end(run: Run, status: RunStatus, *, now: datetime, reason: str, answer: str | None = None) -> Run:
    """Move the run to a terminal status other than succeeded, recording why.

    A run that did not succeed has no answer unless the caller says it reached one (a run whose
    answer came but whose trace could not be stored): text the model wrote on the way (its plan, a
    plain answer where structured output was required) stays in the trace, not shown as the result.
    A cancelled run shows that a cancel was asked for, whichever way the cancel reached it.
    """
    if status is RunStatus.SUCCEEDED or not status.is_terminal:
        raise IllegalTransition(run.status.value, status.value)
    cancelled = run.cancel_requested or status is RunStatus.CANCELLED
    return _move(
        run, status, finished_at=now, failure_reason=reason, answer=answer, expires_at=None, cancel_requested=cancelled
    )


def request_cancel(run: Run, *, now: datetime) -> Run:
    """Ask a run to stop: a pending or paused run is cancelled at once, a running one at its next step.

    Cancelling a cancelled run changes nothing; cancelling a run that ended otherwise raises.
    """
    if run.status is RunStatus.PENDING:
        return end(run, RunStatus.CANCELLED, now=now, reason="cancelled before it started")
    if run.status is RunStatus.RUNNING:
        return msgspec.structs.replace(run, cancel_requested=True)
    if run.status is RunStatus.REQUIRES_ACTION:
        return end(run, RunStatus.CANCELLED, now=now, reason="cancelled while it waited on an approval or tool output")
    if run.status is RunStatus.WAITING:
        return end(run, RunStatus.CANCELLED, now=now, reason="cancelled while it waited on its child runs")
    if run.status is RunStatus.CANCELLED:
        return run
    raise IllegalTransition(run.status.value, RunStatus.CANCELLED.value)


def expire(run: Run, *, now: datetime, reason: str = "worker_lost") -> Run:
    """pending|running → expired: its executor stopped renewing the lease (or, requires_action: nobody answered)."""
    return end(run, RunStatus.EXPIRED, now=now, reason=reason)
