"""A run's events as A2A stream events: status updates, the answer's text as it is written, the answer."""

from collections.abc import AsyncIterator

from a2a.server.events.event_queue import Event
from a2a.types.a2a_pb2 import Artifact, Part, TaskArtifactUpdateEvent

from agentkit.application.ports.run_event_log import DeltaEvent, StatusEvent
from agentkit.application.runs.follow_run import RunFollower
from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.http.a2a.tasks import ANSWER_ARTIFACT, answer_artifact, status_update


async def run_events(follower: RunFollower, *, since_pause: int | None = None) -> AsyncIterator[Event]:
    """The follower's events as A2A's, until the run is at rest (ended, or waiting on input).

    Args:
        follower: The run's events from its start.
        since_pause: For a run that was just answered: its pause count then. The log holds the run
            from its start; what came before the answer (up to the pause answered) is not sent again.
    """
    last: RunStatus | None = None
    catching_up = since_pause is not None
    async for entry in follower:
        if entry is None:  # a keep-alive: nothing to send
            continue
        event = entry.event
        if isinstance(event, StatusEvent):
            run = event.run
            if catching_up and not _after_answer(run, since_pause):
                continue
            catching_up = False
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


def _after_answer(run: Run, pause: int | None) -> bool:
    """Whether this state of the run comes after the pause that was answered."""
    return pause is None or (run.pauses >= pause and run.status is not RunStatus.REQUIRES_ACTION) or run.pauses > pause


def _answer_update(run: Run, artifact: Artifact, *, append: bool, last_chunk: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=run.id, context_id=run.session_id or "", artifact=artifact, append=append, last_chunk=last_chunk
    )
