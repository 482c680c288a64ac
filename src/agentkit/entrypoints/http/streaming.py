"""POST /v1/runs and POST /v1/chat answered as a stream: which format, and the response for a run.

A request streams when its body says `"stream": true`, its `Accept` header prefers
`text/event-stream` to JSON, or it names a `format`: `agentkit` (the run's events, as GET
/v1/runs/{id}/events sends them, resumable there with Last-Event-ID) or `vercel` (the Vercel AI SDK's
UI message stream, for `useChat`). The run is created with `stream` (its model's answers stream), and
the response follows it from its start to its terminal status (FollowRun). Everything that can
refuse the request (the key, the body, the rate limit, a place in flight, the store) does so before
the response starts, as a problem; once the first byte is out, the stream never errors.
"""

from enum import StrEnum
from typing import Annotated, Any, Final, cast

from litestar import Request
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter
from litestar.response import ServerSentEvent

from agentkit.application.errors import StoreUnavailable
from agentkit.application.runs.follow_run import FollowRun
from agentkit.domain.ids import OwnerId
from agentkit.domain.run import Run
from agentkit.entrypoints.http.dto.events import RunEventDoc
from agentkit.entrypoints.http.dto.ui_chunks import UIChunkEventDoc
from agentkit.entrypoints.http.events import event_stream
from agentkit.entrypoints.http.ui_stream import ui_message_stream

EVENT_STREAM: Final = "text/event-stream"


class StreamFormat(StrEnum):
    """How a streamed answer is written."""

    AGENTKIT = "agentkit"
    VERCEL = "vercel"


FormatQuery = Annotated[
    StreamFormat | None,
    QueryParameter(
        description=(
            "Answer with a stream in this format: `agentkit` (the run's events, as GET /v1/runs/{id}/events "
            "sends them) or `vercel` (the Vercel AI SDK's UI message stream, for `useChat`)."
        ),
    ),
]

StreamEventDoc = RunEventDoc | UIChunkEventDoc
"""One event of a streamed answer, in either format (what the document shows)."""


def stream_format(request: Request[Any, Any, Any], *, asked: bool, chosen: StreamFormat | None) -> StreamFormat | None:
    """The answer's format: `chosen` (`?format=`), else `agentkit` when the body asked for a stream or
    `Accept` prefers `text/event-stream` to JSON; None for JSON."""
    if chosen is not None:
        return chosen
    # JSON first: `*/*` (what most clients send) is an answer in JSON
    if asked or request.accept.best_match(["application/json", EVENT_STREAM]) == EVENT_STREAM:
        return StreamFormat.AGENTKIT
    return None


async def run_stream(
    follow: FollowRun, run: Run, owner: OwnerId, form: StreamFormat, headers: dict[str, str]
) -> ServerSentEvent:
    """The run's events from its start, in `form`, with `headers`.

    Raises:
        StoreUnavailable: the run or its events could not be read. The run was accepted all the same
            (it goes on); the problem says where to follow it.
    """
    try:
        follower = await follow.execute(run.id, owner)
    except StoreUnavailable as exc:
        raise StoreUnavailable(
            f"{exc}; run {run.id} was accepted and goes on: follow it at /v1/runs/{run.id}/events"
        ) from None
    if form is StreamFormat.VERCEL:
        return ui_message_stream(follower, headers)
    return event_stream(follower, headers)


def stream_response(description: str) -> ResponseSpec:
    """The document's streamed answer: one event's schema, of either format."""
    return ResponseSpec(
        cast(Any, StreamEventDoc),  # a union of Structs: Litestar documents it as oneOf
        description=description,
        media_type=EVENT_STREAM,
        generate_examples=False,
    )
