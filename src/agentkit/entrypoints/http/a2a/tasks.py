"""A run as an A2A task: its state, its status message, its answer as an artifact, its goal as history.

Every A2A task is an AgentKit run under the same id, and its context is the run's session. The
mapping of statuses (AgentKit has more endings than A2A; the run's own status rides along in the
task's metadata, `agentkit.status`):

| run | task |
| --- | --- |
| pending | SUBMITTED |
| running | WORKING |
| requires_action | INPUT_REQUIRED (the status message carries the pending calls) |
| succeeded | COMPLETED (the answer is the artifact `answer`) |
| refused | REJECTED |
| cancelled | CANCELED |
| failed, max_steps_exceeded, timed_out, expired | FAILED (the status message says why) |
"""

from typing import Any, Final

import msgspec
from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from agentkit.domain.run import Run, RunStatus

ANSWER_ARTIFACT: Final = "answer"
"""The id of the artifact that holds a run's answer (its text, and its structured output when asked for)."""

STATES: Final[dict[RunStatus, TaskState]] = {
    RunStatus.PENDING: TaskState.TASK_STATE_SUBMITTED,
    RunStatus.RUNNING: TaskState.TASK_STATE_WORKING,
    RunStatus.REQUIRES_ACTION: TaskState.TASK_STATE_INPUT_REQUIRED,
    RunStatus.SUCCEEDED: TaskState.TASK_STATE_COMPLETED,
    RunStatus.REFUSED: TaskState.TASK_STATE_REJECTED,
    RunStatus.CANCELLED: TaskState.TASK_STATE_CANCELED,
    RunStatus.FAILED: TaskState.TASK_STATE_FAILED,
    RunStatus.MAX_STEPS_EXCEEDED: TaskState.TASK_STATE_FAILED,
    RunStatus.TIMED_OUT: TaskState.TASK_STATE_FAILED,
    RunStatus.EXPIRED: TaskState.TASK_STATE_FAILED,
}

ANSWER_HOW: Final = (
    "The run waits on the calls in the data part (`pending_calls`). Answer in a message with this taskId "
    'and a data part {"answers": [{"call_id": ..., "decision": "approve" | "reject", "digest": ..., '
    '"reason": ...}]} for an approval, or {"call_id": ..., "output": ...} for a client tool\'s output.'
)


def statuses_of(state: TaskState) -> frozenset[RunStatus]:
    """The run statuses that show as this task state (a filter of ListTasks)."""
    return frozenset(status for status, shown in STATES.items() if shown == state)


def task_of(run: Run, *, history_length: int | None = None) -> Task:
    """The run as an A2A task (its history: the goal as the user's message, unless `history_length` is 0)."""
    task = Task(id=run.id, context_id=run.session_id or "", status=status_of(run), metadata=_metadata(run))
    if run.status is RunStatus.SUCCEEDED:
        task.artifacts.append(answer_artifact(run))
    if history_length is None or history_length > 0:
        task.history.append(goal_message(run))
    return task


def status_of(run: Run) -> TaskStatus:
    """The run's task status, with a message where the run has something to say (why it failed, what it waits on)."""
    status = TaskStatus(state=STATES[run.status], timestamp=_timestamp(run))
    message = _status_message(run)
    if message is not None:
        status.message.CopyFrom(message)
    return status


def status_update(run: Run) -> TaskStatusUpdateEvent:
    """A streamed status change of the run."""
    return TaskStatusUpdateEvent(
        task_id=run.id, context_id=run.session_id or "", status=status_of(run), metadata=_metadata(run)
    )


def answer_artifact(run: Run) -> Artifact:
    """The run's answer: a text part, and a data part with the structured output when the run has one."""
    artifact = Artifact(artifact_id=ANSWER_ARTIFACT, name="answer")
    artifact.parts.append(Part(text=run.answer or ""))
    if run.output is not None:
        artifact.parts.append(data_part(run.output))
    return artifact


def goal_message(run: Run) -> Message:
    """The user's message that started the run (its goal); its id is derived from the run's."""
    return Message(
        message_id=f"{run.id}:goal",
        context_id=run.session_id or "",
        task_id=run.id,
        role=Role.ROLE_USER,
        parts=[Part(text=run.goal)],
    )


def data_part(value: Any) -> Part:
    """A data part holding any JSON value."""
    part = Part()
    ParseDict(msgspec.to_builtins(value), part.data)
    return part


def _status_message(run: Run) -> Message | None:
    parts: list[Part] = []
    if run.status is RunStatus.REQUIRES_ACTION and run.action is not None:
        pending = [
            {
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
                "digest": call.digest,
                "kind": call.kind.value,
            }
            for call in run.action.calls
            if call.answer is None
        ]
        parts = [Part(text=ANSWER_HOW), data_part({"pending_calls": pending})]
    elif run.is_terminal and run.status is not RunStatus.SUCCEEDED:
        parts = [Part(text=run.failure_reason or f"the run ended {run.status.value}")]
    if not parts:
        return None
    return Message(
        message_id=f"{run.id}:{run.status.value}:{run.pauses}",
        context_id=run.session_id or "",
        task_id=run.id,
        role=Role.ROLE_AGENT,
        parts=parts,
    )


def _metadata(run: Run) -> Struct:
    metadata = Struct()
    metadata.update({"agentkit.status": run.status.value, "agentkit.agent": run.agent})
    return metadata


def _timestamp(run: Run) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(run.finished_at or run.heartbeat_at or run.started_at or run.created_at)
    return stamp
