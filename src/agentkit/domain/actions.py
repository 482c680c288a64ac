"""Required actions: the tool calls a paused run waits on, and the answers that let it go on.

A run pauses (`requires_action`) when the model calls a tool that needs a person's approval, or a
client-side tool (one the client runs itself); it waits (`waiting`) when the model calls another
agent: the call is a child run, and the child's end is its answer. Each such call is listed with a digest of its name
and arguments, so an approval is bound to the exact call it approves: an answer that names another
digest is refused. Once every listed call is answered, the run goes on from its stored steps.
"""

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any

import msgspec

from agentkit.domain.errors import ActionRefused
from agentkit.domain.ids import RunId, ToolCallId

# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class ActionKind(StrEnum):
    """Why a call waits: for an approval, or for the output of a tool the client runs."""

    APPROVAL = "approval"
    CLIENT_TOOL = "client_tool"
    CHILD_RUN = "child_run"


class Decision(StrEnum):
    """What an answer says of its call."""

    APPROVE = "approve"
    REJECT = "reject"
    OUTPUT = "output"
    FAIL = "fail"  # a child run that did not succeed: `reason` says how it ended


class CallAnswer(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The answer to one waiting call.

    Attributes:
        decision: Approve or reject (an approval), or the client tool's output.
        reason: Why a call was rejected (shown to the model), if given.
        output: The client tool's output (untrusted data, like any tool's).
        answered_at: When the answer was stored.
    """

    decision: Decision
    answered_at: datetime
    reason: str | None = None
    output: str | None = None


class PendingCall(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One tool call a paused run waits on.

    Attributes:
        call_id: The model's id of the call.
        name: The tool's name.
        arguments: The arguments the model gave.
        digest: SHA-256 of the name and arguments (see `call_digest`): an answer must name it.
        kind: What it waits for.
        answer: The answer, once given.
        child_run_id: The child run that answers it (a call of another agent).
        agent: The agent that child run runs.
    """

    call_id: ToolCallId
    name: str
    arguments: dict[str, Any]
    digest: str
    kind: ActionKind
    answer: CallAnswer | None = None
    child_run_id: RunId | None = None
    agent: str | None = None


class RequiredAction(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a paused run waits on: its pending calls, and until when it waits.

    Attributes:
        calls: The calls of the model's turn that wait, in the model's order.
        requested_at: When the run paused.
        expires_at: When the run ends `expired` unless every call was answered (APPROVAL_TTL_S).
        turn_step: The step number of the LLM step whose turn made the calls: the answers hold for
            that turn only (some providers reuse call ids across turns; an approval must not carry
            over to a later call that happens to share an id).
    """

    calls: tuple[PendingCall, ...]
    requested_at: datetime
    expires_at: datetime
    turn_step: int = 0

    @property
    def answered(self) -> bool:
        """Whether every call has its answer."""
        return all(call.answer is not None for call in self.calls)

    @property
    def client_owes(self) -> bool:
        """Whether a call still waits on the client (an approval, a client tool's output), not on a child run."""
        return any(call.answer is None and call.kind is not ActionKind.CHILD_RUN for call in self.calls)

    def call_of_child(self, child_run_id: RunId) -> PendingCall | None:
        """The call this child run answers, if the action has it."""
        for call in self.calls:
            if call.child_run_id == child_run_id:
                return call
        return None

    def answer_of(self, call_id: ToolCallId) -> CallAnswer | None:
        """The answer given to this call, if any."""
        for call in self.calls:
            if call.call_id == call_id:
                return call.answer
        return None


def call_digest(name: str, arguments: dict[str, Any]) -> str:
    """The digest binding an answer to one call: SHA-256 of the JSON of [name, arguments], keys sorted.

    Clients compute nothing: they echo the digest the run shows. Sorting the keys makes it the same
    for the same call however the arguments were ordered.
    """
    encoded = msgspec.json.encode([name, arguments], order="sorted")
    return hashlib.sha256(encoded).hexdigest()


def answer_call(action: RequiredAction, call_id: ToolCallId, digest: str | None, answer: CallAnswer) -> RequiredAction:
    """The action with one call answered; raises ActionRefused for an answer that does not fit.

    Rules: the call must be one the run waits on, not answered yet; an approval's answer approves or
    rejects and must name the call's digest; a client tool's answer is its output (and, when a
    digest is given, it must match too).
    """
    calls = list(action.calls)
    for index, call in enumerate(calls):
        if call.call_id != call_id:
            continue
        if call.answer is not None:
            raise ActionRefused("already_answered", f"call {call_id} was already answered ({call.answer.decision})")
        if call.kind is ActionKind.CHILD_RUN:
            raise ActionRefused("wrong_answer", f"call {call_id} is answered by its child run {call.child_run_id}")
        if call.kind is ActionKind.APPROVAL and answer.decision is Decision.OUTPUT:
            raise ActionRefused("wrong_answer", f"call {call_id} waits for an approval, not a tool output")
        if call.kind is ActionKind.CLIENT_TOOL and answer.decision is not Decision.OUTPUT:
            raise ActionRefused("wrong_answer", f"call {call_id} waits for the output of the client tool {call.name!r}")
        if digest is None and call.kind is ActionKind.APPROVAL:
            raise ActionRefused("digest_mismatch", f"an approval must name the digest of call {call_id}")
        if digest is not None and digest != call.digest:
            raise ActionRefused(
                "digest_mismatch", f"the digest does not match call {call_id} ({call.name}) as the run shows it"
            )
        calls[index] = msgspec.structs.replace(call, answer=answer)
        return msgspec.structs.replace(action, calls=tuple(calls))
    waiting = ", ".join(call.call_id for call in action.calls)
    raise ActionRefused("unknown_call", f"the run does not wait on a call {call_id!r} (it waits on: {waiting})")


def answer_child_call(action: RequiredAction, child_run_id: RunId, answer: CallAnswer) -> RequiredAction:
    """The action with the call of this child run answered by the child's end.

    Raises:
        ActionRefused: no call waits on this child (`unknown_call`), or it was answered (`already_answered`).
    """
    calls = list(action.calls)
    for index, call in enumerate(calls):
        if call.child_run_id != child_run_id:
            continue
        if call.answer is not None:
            raise ActionRefused("already_answered", f"the call of child run {child_run_id} was already answered")
        calls[index] = msgspec.structs.replace(call, answer=answer)
        return msgspec.structs.replace(action, calls=tuple(calls))
    raise ActionRefused("unknown_call", f"the run waits on no child run {child_run_id}")
