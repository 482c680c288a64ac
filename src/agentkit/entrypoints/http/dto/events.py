"""GET /v1/runs/{id}/events: each Server-Sent Event as the OpenAPI document shows it.

On the wire an event is `id: <event id>`, `event: status|step` and one `data:` line of JSON text;
comments (`: keep-alive`) carry no event. The document's schema is that of one event, fields as
the SSE parser yields them (what OpenAPI 3.2 calls `itemSchema`, and what schemathesis reads from
`schema` on 3.1): `data` is a string whose JSON content (`contentMediaType`, `contentSchema`) is the
run or the step.
"""

from typing import Annotated, Any, Final

import msgspec

from agentkit.application.ports.run_event_log import EVENT_ID_PATTERN
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


class StatusEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="status"):
    """`event: status`: the run as `GET /v1/runs/{id}` shows it, when its status (or attempt, or cancel
    request) changed; the last event of a stream is the terminal one."""

    id: EventIdText
    data: _json_text_of(RunView, "The run (a RunView), as one line of JSON.")  # type: ignore[valid-type]


class StepEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="step"):
    """`event: step`: a step as the trace shows it, when it was recorded."""

    id: EventIdText
    data: _json_text_of(StepView, "The step (a StepView), as one line of JSON.")  # type: ignore[valid-type]


RunEventDoc = StatusEventDoc | StepEventDoc
