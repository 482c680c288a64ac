"""A run as an A2A task: every status has its state, and what a task shows of a paused or failed run."""

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from a2a.types.a2a_pb2 import Role, TaskState
from google.protobuf.json_format import MessageToDict

from agentkit.domain.actions import ActionKind, PendingCall, RequiredAction, call_digest
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.http.a2a.tasks import STATES, statuses_of, task_of

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def run(status: RunStatus, **fields: Any) -> Run:
    base = Run(id=RunId("r-1"), owner=OwnerId("o"), goal="send 5", session_id=SessionId("s-1"), created_at=NOW)
    return msgspec.structs.replace(base, status=status, **fields)


def test_every_run_status_shows_as_a_task_state_and_each_state_filters_back_to_its_statuses() -> None:
    assert set(STATES) == set(RunStatus)
    assert statuses_of(TaskState.TASK_STATE_FAILED) == {
        RunStatus.FAILED,
        RunStatus.MAX_STEPS_EXCEEDED,
        RunStatus.TIMED_OUT,
        RunStatus.EXPIRED,
    }
    assert statuses_of(TaskState.TASK_STATE_AUTH_REQUIRED) == frozenset()


def test_a_paused_run_shows_its_unanswered_calls_and_how_to_answer() -> None:
    call = PendingCall(
        call_id=ToolCallId("c1"),
        name="transfer",
        arguments={"amount": 5},
        digest=call_digest("transfer", {"amount": 5}),
        kind=ActionKind.APPROVAL,
    )
    action = RequiredAction(calls=(call,), requested_at=NOW, expires_at=NOW + timedelta(days=1))

    task = task_of(run(RunStatus.REQUIRES_ACTION, action=action))

    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert task.status.message.role == Role.ROLE_AGENT
    how, data = task.status.message.parts
    assert '{"answers"' in how.text
    assert MessageToDict(data.data) == {
        "pending_calls": [
            {"call_id": "c1", "name": "transfer", "arguments": {"amount": 5}, "digest": call.digest, "kind": "approval"}
        ]
    }
    assert (task.id, task.context_id, task.history[0].parts[0].text) == ("r-1", "s-1", "send 5")
    assert task.metadata["agentkit.status"] == "requires_action"


def test_a_run_that_ran_out_of_steps_is_failed_with_its_reason_and_its_own_status_in_the_metadata() -> None:
    task = task_of(run(RunStatus.MAX_STEPS_EXCEEDED, failure_reason="10 steps and no answer"), history_length=0)

    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert task.status.message.parts[0].text == "10 steps and no answer"
    assert task.metadata["agentkit.status"] == "max_steps_exceeded"
    assert list(task.history) == []
    assert list(task.artifacts) == []


def test_a_succeeded_run_with_structured_output_has_both_in_its_answer_artifact() -> None:
    task = task_of(run(RunStatus.SUCCEEDED, answer="Paris", output={"city": "Paris"}, finished_at=NOW))

    [artifact] = task.artifacts
    assert artifact.artifact_id == "answer"
    assert artifact.parts[0].text == "Paris"
    assert MessageToDict(artifact.parts[1].data) == {"city": "Paris"}
    assert not task.status.HasField("message")
