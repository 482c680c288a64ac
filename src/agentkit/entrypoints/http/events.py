"""A run's events as Server-Sent Events: `status` with the run, `step` with a trace step, `delta` with a
fragment of a step being written, `child` with a child run whose status changed, `child_delta` with a
fragment of a child's step, keep-alive comments."""

from collections.abc import AsyncIterator
from typing import Final

import msgspec
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from agentkit.application.ports.run_event_log import (
    EVENT_ID_PATTERN,
    ChildDeltaEvent,
    ChildEvent,
    StatusEvent,
    StepEvent,
)
from agentkit.application.runs.follow_run import RunFollower
from agentkit.entrypoints.http.dto.events import child_delta_view, delta_view
from agentkit.entrypoints.http.dto.runs import run_view
from agentkit.entrypoints.http.dto.steps import step_view

# The stream ids of Redis (`<ms>-<seq>`), or nothing: what Last-Event-ID and `?after=` accept.
OPTIONAL_EVENT_ID_PATTERN: Final = rf"^({EVENT_ID_PATTERN})?$"
KEEP_ALIVE: Final = "keep-alive"
# nginx (and proxies that follow its header) would otherwise buffer the stream
NO_BUFFERING: Final = {"X-Accel-Buffering": "no"}
_encoder = msgspec.json.Encoder()


async def sse_messages(follower: RunFollower) -> AsyncIterator[ServerSentEventMessage]:
    """The follower's events as SSE messages, and a keep-alive comment wherever it had nothing to say."""
    async for entry in follower:
        if entry is None:
            yield ServerSentEventMessage(comment=KEEP_ALIVE, data=None)
            continue
        event = entry.event
        if isinstance(event, StatusEvent):
            kind, data = "status", _encoder.encode(run_view(event.run))
        elif isinstance(event, StepEvent):
            kind, data = "step", _encoder.encode(step_view(event.step))
        elif isinstance(event, ChildEvent):
            kind, data = "child", _encoder.encode(run_view(event.run))
        elif isinstance(event, ChildDeltaEvent):
            kind, data = "child_delta", _encoder.encode(child_delta_view(event))
        else:
            kind, data = "delta", _encoder.encode(delta_view(event))
        yield ServerSentEventMessage(id=entry.id, event=kind, data=data)


def event_stream(follower: RunFollower, headers: dict[str, str] | None = None) -> ServerSentEvent:
    """The streaming response (with `headers`); proxies are asked not to buffer it."""
    # 200 whatever the route's own status (POST /v1/runs answers 201 when it answers JSON)
    return ServerSentEvent(sse_messages(follower), headers={**(headers or {}), **NO_BUFFERING}, status_code=200)
