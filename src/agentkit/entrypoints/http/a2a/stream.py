"""A run's events as A2A stream events: status updates, the answer's text as it is written, the answer."""

from collections.abc import AsyncIterator

from a2a.server.events.event_queue import Event
from a2a.types.a2a_pb2 import Artifact, Part, TaskArtifactUpdateEvent

from agentkit.application.ports.run_event_log import DeltaEvent, StatusEvent
from agentkit.application.runs.follow_run import RunFollower
from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.http.a2a.tasks import ANSWER_ARTIFACT, answer_artifact, status_update


async def run_events(follower: RunFollower, *, since: Run | None = None) -> AsyncIterator[Event]:
    """The follower's events as A2A's, until the run is at rest (ended, or waiting on input).

    Args:
        follower: The run's events from its start.
        since: The run as the client was just shown it (the task sent first), when the run began
            before this stream did (subscribed to, or just answered): the log holds the run from its
            start, and nothing up to that state is sent again.
    """
    last = since.status if since is not None else None
    catching_up = since is not None
    async for entry in follower:
        if entry is None:  # a keep-alive: nothing to send
            continue
        event = entry.event
        if isinstance(event, StatusEvent):
            run = event.run
            if catching_up:
                catching_up = not _caught_up(run, since)
                if catching_up:
                    continue
            if run.status is RunStatus.SUCCEEDED:
                yield _answer_update(run, answer_artifact(run), append=False, last_chunk=True)
            if run.status is not last:
                last = run.status
                yield status_update(run)
            if run.is_at_rest:
                return
        elif isinstance(event, DeltaEvent) and event.kind == "text" and event.text and not catching_up:
            fragment = Artifact(artifact_id=ANSWER_ARTIFACT, name="answer", parts=[Part(text=event.text)])
            yield _answer_update(follower.run, fragment, append=True, last_chunk=False)


def _caught_up(run: Run, shown: Run | None) -> bool:
    """Whether this state of the run is the one the client was shown, or later."""
    if shown is None or run.is_terminal or run.pauses > shown.pauses:
        return True
    return run.pauses == shown.pauses and run.attempt >= shown.attempt and run.status is shown.status


def _answer_update(run: Run, artifact: Artifact, *, append: bool, last_chunk: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=run.id, context_id=run.session_id or "", artifact=artifact, append=append, last_chunk=last_chunk
    )
