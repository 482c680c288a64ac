"""AgentKitRequestHandler: the a2a-sdk's RequestHandler, each A2A method one of AgentKit's use-cases.

The SDK's JsonRpcDispatcher parses JSON-RPC (v1.0 names, and v0.3's through its adapter) and calls
this handler; the handler never keeps a task of its own: every task is a run (same id), read and
written through the same use-cases as /v1/runs, so it is durable, listed, traced, cancellable, and
executed by whichever process or queue worker takes it.
"""

import datetime
import hashlib
import json
import re
import uuid
from collections.abc import AsyncGenerator
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from dishka import AsyncContainer
from google.protobuf.json_format import MessageToDict

from agentkit.application.errors import IdempotencyMismatch, RunConflict, RunNotFound
from agentkit.application.runs.answer_run import AnswerRun, RunAnswer
from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.follow_run import FollowRun
from agentkit.application.runs.list_runs import MAX_PAGE, ListRuns, ListRunsInput
from agentkit.application.runs.submit_run import SubmitRun, SubmitRunResult
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.http.a2a.errors import as_a2a_errors
from agentkit.entrypoints.http.a2a.messages import answers_of, goal_of
from agentkit.entrypoints.http.a2a.stream import run_events
from agentkit.entrypoints.http.a2a.tasks import statuses_of, task_of

DEFAULT_PAGE: Final = 50  # A2A's default page of ListTasks
MAX_A2A_PAGE: Final = min(100, MAX_PAGE)  # A2A's largest page
CANCEL_WAIT_S: Final = 5.0  # a running run stops at its next step: CancelTask waits a little for it
PUSH_CONFIG_ID: Final = "webhook"  # the one push notification config of a task: its run's callback_url
# a context is a session: the ids /v1 takes for sessions, so either API can continue the other's
_CONTEXT_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_MESSAGE_ID: Final = re.compile(r"[!-~]{1,200}")  # what an idempotency key may be (visible ASCII), prefixed


class AgentKitRequestHandler(RequestHandler):
    """One agent's A2A methods on AgentKit's runs.

    Rules:
    - SendMessage without a taskId starts a run of this agent: the goal is the message's text, the
      session is its contextId (a new one when it has none), a push notification config's URL is the
      run's callback_url. It answers when the run is at rest (ended, or waiting on input), as A2A's
      blocking send must; `returnImmediately` answers at once. The wait is bounded (`blocking_wait_s`:
      the run's time limit and a margin) only so that a run stuck in a queue cannot hold it forever.
    - SendMessage with the taskId of a task in INPUT_REQUIRED answers its pending calls (see
      `messages`); any other task takes no message (UnsupportedOperation: its run ended, or goes on
      by itself).
    - Streaming sends the task, then its status changes, the answer's text as it is written
      (artifact `answer`, appended) and, at the end, the whole answer (artifact `answer`, replaced),
      until the run is at rest.
    - A message sent again (the same messageId and message) is the same task: its id is the run's
      idempotency key; the same id with another message is refused (InvalidParams).
    - Everything is the caller's key's: another key's task does not exist (TaskNotFound).
    """

    def __init__(self, *, agent: str, blocking_wait_s: float, webhooks: bool) -> None:
        self._agent = agent
        self._blocking_wait_s = blocking_wait_s
        self._webhooks = webhooks

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        """Start a run, or answer the calls a run waits on; the task once at rest (or after the wait)."""
        wait_s = 0.0 if params.configuration.return_immediately else self._blocking_wait_s
        history = _history_length(params)
        with as_a2a_errors():
            container, owner = _caller(context)
            if params.message.task_id:
                run = await self._answer(container, owner, params.message)
                run = await (await container.get(WaitForRun)).execute(run.id, owner, wait_s=wait_s)
            else:
                run = (await self._submit(container, owner, params, stream=False, wait_s=wait_s)).run
        return task_of(run, history_length=history)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        """The task, then its events until the run is at rest."""
        with as_a2a_errors():
            container, owner = _caller(context)
            if params.message.task_id:
                run = await self._answer(container, owner, params.message)
            else:
                run = (await self._submit(container, owner, params, stream=True, wait_s=0.0)).run
            follower = await (await container.get(FollowRun)).execute(run.id, owner)
        yield task_of(run, history_length=_history_length(params))
        async for event in run_events(follower, since=run if params.message.task_id else None):
            yield event

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        """The task of a run of the caller's."""
        with as_a2a_errors():
            container, owner = _caller(context)
            run = await (await container.get(WaitForRun)).execute(_run_id(params.id), owner, wait_s=0.0)
        return task_of(run, history_length=params.history_length if params.HasField("history_length") else None)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks (its runs, of every agent), newest first, a page at a time."""
        size = params.page_size if params.HasField("page_size") else DEFAULT_PAGE
        if not 1 <= size <= MAX_A2A_PAGE:
            raise InvalidParamsError(message=f"pageSize must be between 1 and {MAX_A2A_PAGE}")
        statuses = frozenset[RunStatus]()
        if params.status != TaskState.TASK_STATE_UNSPECIFIED:
            statuses = statuses_of(params.status)
            if not statuses:  # a state no run has (AUTH_REQUIRED): nothing to list
                return ListTasksResponse(page_size=size)
        with as_a2a_errors():
            container, owner = _caller(context)
            page = await (await container.get(ListRuns)).execute(
                ListRunsInput(
                    owner=owner,
                    statuses=statuses,
                    session_id=SessionId(params.context_id) if params.context_id else None,
                    created_after=(
                        params.status_timestamp_after.ToDatetime(tzinfo=datetime.UTC)
                        if params.HasField("status_timestamp_after")
                        else None
                    ),
                    limit=size,
                    cursor=params.page_token or None,
                )
            )
        history = params.history_length if params.HasField("history_length") else None
        return ListTasksResponse(
            tasks=[task_of(run, history_length=history) for run in page.runs],
            next_page_token=page.next_cursor or "",
            page_size=size,
            total_size=len(page.runs),
        )

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        """Cancel the run; a running one stops at its next step (read again once it did, or after a while)."""
        with as_a2a_errors():
            container, owner = _caller(context)
            run = await (await container.get(WaitForRun)).execute(_run_id(params.id), owner, wait_s=0.0)
            if run.is_terminal:  # a cancelled run too: A2A cancels a task once
                raise TaskNotCancelableError(message=f"task {run.id} ended {run.status.value}")
            try:
                run = await (await container.get(CancelRun)).execute(run.id, owner)
            except RunConflict as exc:  # it ended meanwhile
                raise TaskNotCancelableError(message=str(exc)) from None
            if not run.is_at_rest:
                run = await (await container.get(WaitForRun)).execute(run.id, owner, wait_s=CANCEL_WAIT_S)
        return task_of(run)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        """The task, then its events until the run is at rest; a task that ended has nothing to subscribe to."""
        with as_a2a_errors():
            container, owner = _caller(context)
            follower = await (await container.get(FollowRun)).execute(_run_id(params.id), owner)
        if follower.run.is_terminal:
            raise UnsupportedOperationError(message=f"task {params.id} ended: read it with GetTask")
        yield task_of(follower.run)
        async for event in run_events(follower, since=follower.run):
            yield event

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Refused: a run's webhook URL is fixed when it starts (give it in SendMessage's configuration)."""
        raise UnsupportedOperationError(
            message="give the push notification config in SendMessage's configuration: a run's webhook URL is set "
            "when it starts"
        )

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """The run's webhook, as the task's one push notification config (id `webhook`)."""
        configs = await self._push_configs(params.task_id, context)
        if params.id != PUSH_CONFIG_ID or not configs:
            raise InvalidParamsError(message=f"task {params.task_id} has no push notification config {params.id!r}")
        return configs[0]

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """The run's webhook, if it has one."""
        return ListTaskPushNotificationConfigsResponse(configs=await self._push_configs(params.task_id, context))

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Refused: a run's webhook stays for its life."""
        raise UnsupportedOperationError(message="a run's webhook cannot be removed")

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """None here: the public card says everything."""
        raise UnsupportedOperationError(message="this agent has no extended agent card")

    async def _submit(
        self, container: AsyncContainer, owner: OwnerId, params: SendMessageRequest, *, stream: bool, wait_s: float
    ) -> SubmitRunResult:
        goal = goal_of(params.message)
        if answers_of(params.message):
            raise InvalidParamsError(message="answers need the taskId of the task that waits on them")
        push = params.configuration.task_push_notification_config
        if push.url and not self._webhooks:
            raise PushNotificationNotSupportedError(
                message="push notifications are off: the server has no WEBHOOK_SECRET"
            )
        context_id = params.message.context_id or f"a2a-{uuid.uuid4()}"
        if not _CONTEXT_ID.fullmatch(context_id):
            raise InvalidParamsError(message="contextId: 1 to 128 letters, digits and . _ : -")
        key, fingerprint = _idempotency(params, self._agent)
        submit = await container.get(SubmitRun)
        try:
            return await submit.execute(
                CreateRunInput(
                    owner=owner,
                    goal=goal,
                    session_id=SessionId(context_id),
                    agent=self._agent,
                    callback_url=push.url or None,
                    stream=stream,
                    idempotency_key=key,
                    request_fingerprint=fingerprint,
                ),
                wait_s=wait_s,
            )
        except IdempotencyMismatch:
            raise InvalidParamsError(
                message=f"messageId {params.message.message_id!r} came before with another message: "
                "give each message an id of its own"
            ) from None

    async def _answer(self, container: AsyncContainer, owner: OwnerId, message: Message) -> Run:
        """Give the run the message's answers; the run as it then stands."""
        run_id = _run_id(message.task_id)
        run = await (await container.get(WaitForRun)).execute(run_id, owner, wait_s=0.0)
        if run.status is not RunStatus.REQUIRES_ACTION:
            raise UnsupportedOperationError(
                message=f"task {run.id} is {run.status.value} and takes no message; send a new message (without "
                "taskId, with its contextId to continue the conversation)"
            )
        answers = answers_of(message)
        if not answers:
            raise InvalidParamsError(message="the task waits on its pending calls: answer them in a data part")
        answer_run = await container.get(AnswerRun)
        for answer in answers:
            run = await answer_run.execute(
                RunAnswer(
                    run_id=run_id,
                    owner=owner,
                    call_id=ToolCallId(answer.call_id),
                    decision=answer.decided,
                    digest=answer.digest,
                    reason=answer.reason,
                    output=answer.output_text,
                )
            )
        return run

    async def _push_configs(self, task_id: str, context: ServerCallContext) -> list[TaskPushNotificationConfig]:
        with as_a2a_errors():
            container, owner = _caller(context)
            run = await (await container.get(WaitForRun)).execute(_run_id(task_id), owner, wait_s=0.0)
        if run.callback_url is None:
            return []
        return [TaskPushNotificationConfig(id=PUSH_CONFIG_ID, task_id=run.id, url=run.callback_url)]


def _caller(context: ServerCallContext) -> tuple[AsyncContainer, OwnerId]:
    """The request's container and the caller's owner id (the route's guard checked the key)."""
    return context.state["container"], context.state["owner"]


def _run_id(raw: str) -> RunId:
    """A task id is a run id (a UUID); anything else names no task."""
    try:
        return RunId(str(uuid.UUID(raw)))
    except ValueError:
        raise RunNotFound(f"no task with id {raw[:100]!r}") from None


def _idempotency(params: SendMessageRequest, agent: str) -> tuple[str | None, str | None]:
    """The message's id as the run's idempotency key, and a digest of what it asks, as its fingerprint.

    A2A's message ids are the sender's, unique per message: a message sent again (a retry after a lost
    answer) is the same task, not a second run. Ids that are no idempotency key (too long, not visible
    ASCII) give none.
    """
    message_id = params.message.message_id
    if not _MESSAGE_ID.fullmatch(message_id):
        return None, None
    asked = [agent, MessageToDict(params.message), params.configuration.task_push_notification_config.url]
    return f"a2a:{message_id}", hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def _history_length(params: SendMessageRequest) -> int | None:
    return params.configuration.history_length if params.configuration.HasField("history_length") else None
