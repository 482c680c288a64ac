"""The run aggregate and its status state machine.

    pending ──▶ running ──▶ succeeded | failed | refused | max_steps_exceeded | timed_out | cancelled
       │         │  ▲  ▲
       │         └──┘  └──── requires_action ──▶ cancelled | expired (unanswered within APPROVAL_TTL_S)
       │   resumed: another executor    ▲ │
       │   takes it over                └─┘ paused: calls wait on an approval or a client tool's output;
       ├──▶ cancelled, failed                answered, the run goes on from its stored steps
       └───────────┴──▶ expired   (no executor within the lease, MAX_RUN_ATTEMPTS times)

Terminal statuses never change again. A run in `requires_action` holds no executor and no lease:
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

from agentkit.domain.actions import CallAnswer, PendingCall, RequiredAction, answer_call
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
        """Whether no executor works on the run: it ended, or waits on its client (`requires_action`)."""
        return self not in _EXECUTABLE


_UNFINISHED = frozenset({RunStatus.PENDING, RunStatus.RUNNING, RunStatus.REQUIRES_ACTION})
_EXECUTABLE = frozenset({RunStatus.PENDING, RunStatus.RUNNING})


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
    }
)

ALLOWED_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.PENDING: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.EXPIRED}),
    RunStatus.RUNNING: _ENDINGS_OF_RUNNING,
    RunStatus.REQUIRES_ACTION: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.EXPIRED}),
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

    @property
    def is_terminal(self) -> bool:
        """Whether the run has ended for good."""
        return self.status.is_terminal

    @property
    def is_at_rest(self) -> bool:
        """Whether no executor works on it: it ended, or waits on its client."""
        return self.status.is_at_rest

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
    """running → requires_action: these calls (of the turn of LLM step `turn_step`) wait on answers until `until`.

    The run gives up its lease, whose expiry becomes the action's: the sweeper ends a run nobody
    answered `expired`.
    """
    if not calls:
        raise ValueError("a run pauses on at least one call")
    action = RequiredAction(calls=calls, requested_at=now, expires_at=until, turn_step=turn_step)
    return _move(run, RunStatus.REQUIRES_ACTION, action=action, expires_at=until, calling=(), pauses=run.pauses + 1)


def give_answer(run: Run, call_id: ToolCallId, digest: str | None, given: CallAnswer, *, now: datetime) -> Run:
    """Record the answer to one waiting call; with the last one, requires_action → running, claimable at once.

    Raises:
        IllegalTransition: the run does not wait on anything.
        ActionRefused: the answer does not fit the call (see `domain.actions.answer_call`).
    """
    if run.status is not RunStatus.REQUIRES_ACTION or run.action is None:
        raise IllegalTransition(run.status.value, RunStatus.RUNNING.value)
    action = answer_call(run.action, call_id, digest, given)
    if not action.answered:
        return msgspec.structs.replace(run, action=action)
    # a lease that lapsed now: the next executor (any process) claims it and goes on from its steps
    return _move(run, RunStatus.RUNNING, action=action, expires_at=now)


def action_done(run: Run) -> Run:
    """The answered calls have run: the run no longer carries their answers."""
    return msgspec.structs.replace(run, action=None)


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
        )
    return msgspec.structs.replace(
        run,
        input_tokens=run.input_tokens + usage.input_tokens,
        output_tokens=run.output_tokens + usage.output_tokens,
        cost_usd=(run.cost_usd or 0.0) + cost_usd,
    )


def with_usage(run: Run, *, input_tokens: int, output_tokens: int) -> Run:
    """The run with its token totals set (rebuilt from its stored steps when it resumes)."""
    return msgspec.structs.replace(run, input_tokens=input_tokens, output_tokens=output_tokens)


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
    if run.status is RunStatus.CANCELLED:
        return run
    raise IllegalTransition(run.status.value, RunStatus.CANCELLED.value)


def expire(run: Run, *, now: datetime, reason: str = "worker_lost") -> Run:
    """pending|running → expired: its executor stopped renewing the lease (or, requires_action: nobody answered)."""
    return end(run, RunStatus.EXPIRED, now=now, reason=reason)
