"""What a run in `requires_action` waits on, as the run shows it."""

from datetime import datetime
from typing import Any, Literal

import msgspec

from agentkit.domain.actions import RequiredAction


class CallAnswerView(msgspec.Struct, kw_only=True):
    """The answer a waiting call got."""

    decision: Literal["approve", "reject", "output", "fail"]
    answered_at: datetime
    reason: str | None = None


class PendingCallView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A call the run waits on: approve or reject it (`approval`), or post its output (`client_tool`).

    A `child_run` call is another agent's: its child run (`child_run_id`) answers it when it ends.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    digest: str
    kind: Literal["approval", "client_tool", "child_run"]
    answer: CallAnswerView | None
    child_run_id: str | None = None
    agent: str | None = None


class RequiredActionView(msgspec.Struct, kw_only=True):
    """What a run in `requires_action` waits on, and until when (APPROVAL_TTL_S; then it ends `expired`)."""

    calls: list[PendingCallView]
    requested_at: datetime
    expires_at: datetime


def action_view(action: RequiredAction | None) -> RequiredActionView | None:
    """The wire view of what a run waits on (None when it waits on nothing)."""
    if action is None:
        return None
    return RequiredActionView(
        calls=[
            PendingCallView(
                call_id=call.call_id,
                name=call.name,
                arguments=call.arguments,
                digest=call.digest,
                kind=call.kind.value,
                answer=None
                if call.answer is None
                else CallAnswerView(
                    decision=call.answer.decision.value, answered_at=call.answer.answered_at, reason=call.answer.reason
                ),
                child_run_id=call.child_run_id,
                agent=call.agent,
            )
            for call in action.calls
        ],
        requested_at=action.requested_at,
        expires_at=action.expires_at,
    )
