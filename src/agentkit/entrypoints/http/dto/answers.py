"""The answers a run in `requires_action` waits on: an approval, a client tool's output."""

from typing import Annotated, Any, Literal

import msgspec


class ApprovalCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/runs/{id}/approvals: approve or reject one waiting call, named by its id and digest."""

    call_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The call's `call_id`.")]
    digest: Annotated[
        str,
        msgspec.Meta(
            min_length=1, max_length=128, description="The call's `digest` as the run shows it: binds the approval."
        ),
    ]
    decision: Literal["approve", "reject"]
    reason: (
        Annotated[str, msgspec.Meta(max_length=2000, description="Why (a rejection's reason is shown to the model).")]
        | None
    ) = None


class ToolOutputCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/runs/{id}/tool_outputs: the output of a client tool's call (text, or any JSON, sent as JSON text)."""

    call_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The call's `call_id`.")]
    output: Any
    digest: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=128, description="The call's `digest`, if checked.")]
        | None
    ) = None
