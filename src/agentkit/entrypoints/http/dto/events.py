"""GET /v1/runs/{id}/events: each Server-Sent Event as the OpenAPI document shows it.

On the wire an event is `id: <event id>`, `event: status|step|delta` and one `data:` line of JSON text;
comments (`: keep-alive`) carry no event. The document's schema is that of one event, fields as
the SSE parser yields them (what OpenAPI 3.2 calls `itemSchema`, and what schemathesis reads from
`schema` on 3.1): `data` is a string whose JSON content (`contentMediaType`, `contentSchema`) is the
run or the step.
"""

from typing import Annotated, Any, Final

import msgspec

from agentkit.application.ports.run_event_log import EVENT_ID_PATTERN, ChildDeltaEvent, DeltaEvent, DeltaKind
from agentkit.application.tools.schema import inline_refs
from agentkit.entrypoints.http.dto.runs import RunView
from agentkit.entrypoints.http.dto.steps import StepView

EventIdText = Annotated[
    str,
    msgspec.Meta(
        pattern=f"^{EVENT_ID_PATTERN}$",
        description="The event's id: send it back as Last-Event-ID (or `?after=`) to resume after it.",
    ),
]
_JSON: Final = "application/json"


def _json_text_of(view: type[msgspec.Struct], description: str) -> Any:
    """A `data:` field: JSON text whose value is `view` (the document's component of that name)."""
    return Annotated[
        str,
        msgspec.Meta(
            description=description,
            extra_json_schema={
                "extra": {"contentMediaType": _JSON, "contentSchema": {"$ref": f"#/components/schemas/{view.__name__}"}}
            },
        ),
    ]


def _json_text_inline(view: type[msgspec.Struct], description: str) -> Any:
    """A `data:` field: JSON text whose value is `view`, its schema written out (no route returns it whole)."""
    schema = inline_refs(msgspec.json.schema(view))
    schema.pop("title", None)
    return Annotated[
        str,
        msgspec.Meta(
            description=description,
            extra_json_schema={"extra": {"contentMediaType": _JSON, "contentSchema": schema}},
        ),
    ]


class StatusEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="status"):
    """`event: status`: the run as `GET /v1/runs/{id}` shows it, when its status (or attempt, or cancel
    request) changed; the last event of a stream is the terminal one."""

    id: EventIdText
    data: _json_text_of(RunView, "The run (a RunView), as one line of JSON.")  # type: ignore[valid-type]


class StepEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="step"):
    """`event: step`: a step as the trace shows it, when it was recorded."""

    id: EventIdText
    data: _json_text_of(StepView, "The step (a StepView), as one line of JSON.")  # type: ignore[valid-type]


class DeltaView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A fragment of an LLM step while the model writes it.

    Attributes:
        step_no: The LLM step it belongs to; its `step` event, when it comes, has the whole of it.
        kind: `text`: a piece of the answer's text. `tool_call`: a piece of a call's arguments JSON
            (the pieces of one call, joined, are its arguments as the model wrote them). `retry`: the
            run was resumed and asks the model again: drop what came of this step so far.
        index: The call's place in the turn (`tool_call`); 0 otherwise.
        text: The fragment.
        call_id: The call's id, on its first fragment.
        name: The tool's name, on the call's first fragment.
    """

    step_no: int
    kind: DeltaKind
    index: int = 0
    text: str = ""
    call_id: str | None = None
    name: str | None = None


def delta_view(delta: DeltaEvent) -> DeltaView:
    """The wire form of a fragment."""
    return DeltaView(
        step_no=delta.step_no,
        kind=delta.kind,
        index=delta.index,
        text=delta.text,
        call_id=delta.call_id,
        name=delta.name,
    )


class DeltaEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="delta"):
    """`event: delta`: a fragment of an LLM step while the model writes it (runs that stream: created with
    `stream`, or followed while their model answers). Fragments of a step are dropped from the log once
    the step is recorded: a client resuming after them gets the `step` event, which has it all."""

    id: EventIdText
    data: _json_text_inline(DeltaView, "The fragment (a DeltaView), as one line of JSON.")  # type: ignore[valid-type]


class ChildDeltaView(msgspec.Struct, kw_only=True):
    """A fragment of a child run's LLM step: the child's id, and the fragment as its own stream has it."""

    run_id: str
    delta: DeltaView


def child_delta_view(event: ChildDeltaEvent) -> ChildDeltaView:
    """The wire form of a child's fragment."""
    return ChildDeltaView(run_id=event.run_id, delta=delta_view(event.delta))


class ChildDeltaEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="child_delta"):
    """`event: child_delta`: a fragment of a child run's LLM step while its model writes it (children
    of a run that streams stream too); the child's own `step` event and trace have it whole."""

    id: EventIdText
    data: _json_text_of(ChildDeltaView, "The child's id and its fragment, as one line of JSON.")  # type: ignore[valid-type]


class ChildEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="child"):
    """`event: child`: a child run of this run (an agent it called as a tool), as `GET /v1/runs/{id}`
    shows it, when its status changed."""

    id: EventIdText
    data: _json_text_of(RunView, "The child run (a RunView), as one line of JSON.")  # type: ignore[valid-type]


RunEventDoc = StatusEventDoc | StepEventDoc | DeltaEventDoc | ChildEventDoc | ChildDeltaEventDoc
