"""/v1/runs: create, read, trace and cancel runs. Controllers only translate wire to use-case and back."""

import hashlib
import urllib.parse
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal, cast

import msgspec
from dishka.integrations.litestar import FromDishka, inject
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import BodyKwarg, HeaderParameter, PathParameter, QueryParameter
from litestar.response import ServerSentEvent

from agentkit.application.agents.profile import AGENT_NAME_PATTERN
from agentkit.application.errors import InvalidListing, RunNotFound
from agentkit.application.ports.run_event_log import EventId
from agentkit.application.runs.answer_run import AnswerRun, RunAnswer
from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.follow_run import FollowRun
from agentkit.application.runs.list_runs import DEFAULT_PAGE, MAX_PAGE, ListRuns, ListRunsInput
from agentkit.application.runs.queries import GetChildren, GetTrace
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.domain.actions import Decision
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.http.body import MAX_JSON_DEPTH, RunCreateDTO, check_body, check_json_body
from agentkit.entrypoints.http.config import ApiConfig
from agentkit.entrypoints.http.dto.answers import ApprovalCreate, ToolOutputCreate
from agentkit.entrypoints.http.dto.events import RunEventDoc
from agentkit.entrypoints.http.dto.fields import StatusText
from agentkit.entrypoints.http.dto.run_create import RunCreate, run_create_type
from agentkit.entrypoints.http.dto.runs import RunListView, RunView, run_view
from agentkit.entrypoints.http.dto.trace import TraceView, trace_view
from agentkit.entrypoints.http.events import OPTIONAL_EVENT_ID_PATTERN, event_stream
from agentkit.entrypoints.http.options import options_for
from agentkit.entrypoints.http.problems import problem_responses
from agentkit.entrypoints.http.responses import waited_response
from agentkit.entrypoints.http.streaming import FormatQuery, run_stream, stream_format, stream_response

MAX_WAIT_S = 60.0

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        min_length=1,
        max_length=255,
        # visible ASCII, spaces only inside: what survives an HTTP header unchanged
        pattern=r"^[!-~]([ -~]*[!-~])?$",
        description=(
            "Makes retries safe: the same key and body return the first run; the same key with another body is a "
            "422 (`idempotency_key_reused`). 1 to 255 visible ASCII characters, scoped to the API key."
        ),
    ),
]
Prefer = Annotated[str | None, HeaderParameter(name="Prefer", description="`respond-async` answers 202 at once.")]
WaitSeconds = Annotated[
    float, QueryParameter(ge=0, le=MAX_WAIT_S, description="Wait up to this many seconds for the run to end.")
]
RunIdPath = Annotated[
    str,
    PathParameter(
        description="A run id: a UUID (upper case, braces, `urn:uuid:` and dash-less spellings name the same run).",
        schema_extra={"format": "uuid"},
    ),
]
# the schema says what the decoder does: unknown fields are refused
RunCreateBody = Annotated[
    RunCreate, BodyKwarg(media_type=RequestEncodingType.JSON, schema_extra={"additional_properties": False})
]
ApprovalBody = Annotated[
    ApprovalCreate, BodyKwarg(media_type=RequestEncodingType.JSON, schema_extra={"additional_properties": False})
]
ToolOutputBody = Annotated[
    ToolOutputCreate, BodyKwarg(media_type=RequestEncodingType.JSON, schema_extra={"additional_properties": False})
]
Owner = NamedDependency[OwnerId]
Include = Annotated[
    list[Literal["prompts"]] | None,
    QueryParameter(description="`prompts`: also every message and tool set the run's LLM calls sent."),
]
Statuses = Annotated[
    list[StatusText] | None,
    QueryParameter(description="Only runs in these statuses (repeat the parameter for several)."),
]
SessionFilter = Annotated[
    str | None,
    QueryParameter(
        min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$", description="Only this session's runs."
    ),
]
AgentFilter = Annotated[
    str | None, QueryParameter(pattern=AGENT_NAME_PATTERN, max_length=64, description="Only this agent's runs.")
]
# Strings parsed here: Litestar's own datetime parameter also takes `0.5` (a timestamp), which the
# document's date-time format does not allow.
CreatedBefore = Annotated[
    str | None,
    QueryParameter(
        description="Only runs created before this time (RFC 3339 with a time zone).",
        schema_extra={"format": "date-time"},
    ),
]
CreatedAfter = Annotated[
    str | None,
    QueryParameter(
        description="Only runs created at or after this time (RFC 3339 with a time zone).",
        schema_extra={"format": "date-time"},
    ),
]
ParentFilter = Annotated[
    str | None,
    QueryParameter(min_length=1, max_length=64, description="Only the child runs of this run."),
]
Limit = Annotated[int, QueryParameter(ge=1, le=MAX_PAGE, description="Runs per page.")]
Cursor = Annotated[
    str | None,
    QueryParameter(min_length=1, max_length=200, description="Continue after the page that gave this `next_cursor`."),
]

# Plain strings, empty when absent (not `str | None`: a document allowing null would let "null" through);
# empty is no event, as an EventSource that has seen none sends it
LastEventId = Annotated[
    str,
    HeaderParameter(
        name="Last-Event-ID",
        pattern=OPTIONAL_EVENT_ID_PATTERN,
        max_length=41,
        description="Resume after this event (the `id` of the last event received); wins over `after`.",
    ),
]
AfterEvent = Annotated[
    str,
    QueryParameter(
        pattern=OPTIONAL_EVENT_ID_PATTERN,
        max_length=41,
        description="Start after this event id (for clients that cannot set Last-Event-ID).",
    ),
]


def runs_controller(config: ApiConfig) -> type["RunsController"]:
    """The runs routes for this configuration: the body decoder enforces its limits and the document shows them."""
    dto = RunCreateDTO.for_type(run_create_type(config.max_goal_chars, config.agent_names, webhooks=config.webhooks))
    return type("RunsController", (RunsController,), {"dto": dto})


class RunsController(Controller):
    """Runs of the caller's API key; another key's runs do not exist for it (404)."""

    path = "/runs"
    tags = ["runs"]  # noqa: RUF012 - Litestar reads it as a class attribute
    dto = RunCreateDTO
    return_dto = None
    allowed = options_for("/", "GET", "POST")

    @post(
        "/",
        status_code=201,
        before_request=check_body,
        summary="Run the agent on a goal",
        description=(
            "Answers 201 with the finished run, or 202 with `Location` and `Retry-After` when it is still "
            "running after RESPONSE_TIMEOUT_S (at once with `Prefer: respond-async`). The body is "
            "`application/json` (a request without a Content-Type is read as JSON too) of at most "
            f"MAX_BODY_BYTES (64 KiB unless configured), nested at most {MAX_JSON_DEPTH} levels; it is validated "
            'strictly (`"5"` is not an integer). Nothing is stored unless the whole request is valid.\n\n'
            '**Streaming**: with `"stream": true`, `Accept: text/event-stream` or `?format=`, the answer is 200 '
            "with the run's Server-Sent Events from its start to its terminal status, its model's answers as "
            "they are written: `format=agentkit` (the default) sends what GET /v1/runs/{id}/events sends "
            "(reconnect there with `Last-Event-ID`), `format=vercel` the Vercel AI SDK's UI message stream. "
            "Refusals (401, 422, 429, 503) come as problems before the stream starts. A replayed "
            "Idempotency-Key streams the first run from its start."
        ),
        responses={
            200: stream_response(
                "Streamed (`stream`, `Accept: text/event-stream` or `format`): the run's events, as "
                "`text/event-stream`, until its terminal status; `Location` names the run. The schema is that "
                "of one event: `format=agentkit` as GET /v1/runs/{id}/events, `format=vercel` a UI message "
                "chunk (`data:` only), then `data: [DONE]`."
            ),
            201: ResponseSpec(
                RunView, description="The run, ended (or waiting on its client)", generate_examples=False
            ),
            202: ResponseSpec(RunView, description="Accepted and still running: poll `Location`"),
            **problem_responses(400, 401, 409, 413, 415, 422, 429, 503, idempotency_key=True),
        },
    )
    @inject
    async def create(
        self,
        request: Request[Any, Any, Any],
        data: RunCreateBody,
        owner: Owner,
        submit: FromDishka[SubmitRun],
        follow: FromDishka[FollowRun],
        config: FromDishka[ApiConfig],
        idempotency_key: IdempotencyKey = None,
        prefer: Prefer = None,
        format: FormatQuery = None,
    ) -> Response[RunView] | ServerSentEvent:
        """Create a run (and stream it, when asked)."""
        form = stream_format(request, asked=data.stream, chosen=format)
        respond_async = form is None and prefer is not None and "respond-async" in prefer.lower()
        result = await submit.execute(
            CreateRunInput(
                owner=owner,
                goal=data.goal,
                session_id=SessionId(data.session_id) if data.session_id else None,
                output_schema=data.output_schema,
                max_steps=data.max_steps,
                token_budget=data.token_budget,
                cost_budget=data.cost_budget,
                idempotency_key=idempotency_key,
                request_fingerprint=_fingerprint(data) if idempotency_key else None,
                agent=data.agent,
                approval_required=tuple(data.approval_required or ()),
                client_tools=tuple(
                    ToolSchema(name=name, description=spec.description, parameters=spec.parameters)
                    for name, spec in (data.client_tools or {}).items()
                ),
                callback_url=data.callback_url,
                stream=form is not None,
            ),
            wait_s=0.0 if respond_async or form is not None else config.response_timeout_s,
        )
        headers = {"Location": f"/v1/runs/{result.run.id}"}
        if result.replayed:
            headers["Idempotent-Replayed"] = "true"
        if form is not None:
            return await run_stream(follow, result.run, owner, form, headers)
        if respond_async:
            headers["Preference-Applied"] = "respond-async"
        return _run_response(result.run, headers, created=True)

    @get(
        "/",
        summary="List the key's runs",
        description=(
            "Newest first, by creation time; filtered by status, session, agent and creation time. Keyset "
            "pagination: follow `next` (or pass `next_cursor` as "
            "`cursor`) until it is null; runs created meanwhile never shift a page, so none is repeated or "
            "skipped. Another key's runs are never listed; a cursor this API did not give is a 404."
        ),
        responses=problem_responses(401, 404, 422, 503),
    )
    @inject
    async def list_runs(
        self,
        owner: Owner,
        lister: FromDishka[ListRuns],
        status: Statuses = None,
        session_id: SessionFilter = None,
        agent: AgentFilter = None,
        created_before: CreatedBefore = None,
        created_after: CreatedAfter = None,
        limit: Limit = DEFAULT_PAGE,
        cursor: Cursor = None,
        parent_run_id: ParentFilter = None,
    ) -> RunListView:
        """A page of runs."""
        page = await lister.execute(
            ListRunsInput(
                owner=owner,
                statuses=frozenset(RunStatus(value) for value in status or ()),
                session_id=SessionId(session_id) if session_id else None,
                parent_run_id=RunId(parent_run_id) if parent_run_id else None,
                agent=agent,
                created_before=_moment(created_before, "created_before"),
                created_after=_moment(created_after, "created_after"),
                limit=limit,
                cursor=cursor,
            )
        )
        next_link = None
        if page.next_cursor is not None:
            query: list[tuple[str, str]] = [("status", value) for value in status or ()]
            if session_id:
                query.append(("session_id", session_id))
            if parent_run_id:
                query.append(("parent_run_id", parent_run_id))
            if agent:
                query.append(("agent", agent))
            if created_before:
                query.append(("created_before", created_before))
            if created_after:
                query.append(("created_after", created_after))
            query += [("limit", str(limit)), ("cursor", page.next_cursor)]
            next_link = "/v1/runs?" + urllib.parse.urlencode(query)
        return RunListView(runs=[run_view(run) for run in page.runs], next_cursor=page.next_cursor, next=next_link)

    @get(
        "/{run_id:str}",
        summary="Read a run",
        description="`?wait=N` long-polls until the run ends.",
        responses=problem_responses(401, 404, 422, 503),
    )
    @inject
    async def read(
        self,
        run_id: RunIdPath,
        owner: Owner,
        waiter: FromDishka[WaitForRun],
        children: FromDishka[GetChildren],
        wait: WaitSeconds = 0.0,
    ) -> RunView:
        """Read a run, optionally waiting for it to end; with its child runs."""
        run = await waiter.execute(_run_id(run_id), owner, wait_s=wait)
        return run_view(run, children=await children.execute(run))

    @get(
        "/{run_id:str}/trace",
        summary="Read a run's trace",
        description=(
            "Every LLM call and tool call, in order, with tokens, cost, latency, retries and errors. "
            "`?include=prompts` adds what the LLM calls sent: each message once (`messages`) and each "
            "tool set once (`tool_sets`); LLM step N sent the first `request.message_count` messages "
            "and the tool set `request.tools_digest`."
        ),
        responses=problem_responses(401, 404, 422, 503),
    )
    @inject
    async def trace(
        self, run_id: RunIdPath, owner: Owner, get_trace: FromDishka[GetTrace], include: Include = None
    ) -> TraceView:
        """Every LLM call and tool call of the run, in order."""
        if include and "prompts" in include:
            run, steps, prompts = await get_trace.with_prompts(_run_id(run_id), owner)
            return trace_view(run, steps, prompts)
        run, steps = await get_trace.execute(_run_id(run_id), owner)
        return trace_view(run, steps)

    @get(
        "/{run_id:str}/events",
        summary="Follow a run's events (Server-Sent Events)",
        description=(
            "A `text/event-stream` of the run's status changes (`event: status`, the run as `GET "
            "/v1/runs/{id}` shows it) and of each step as it is recorded (`event: step`, as the trace shows "
            "it), in order, whichever process or worker executes the run. While someone follows a run (or "
            "when it was created with `stream`), its model's answers stream: `event: delta` carries each "
            "fragment of the text or of a call's arguments as it comes, before the step that holds it all. "
            "The stream ends after the "
            "terminal status. Each event has an `id`: reconnect with `Last-Event-ID` (or `?after=`) and "
            "the stream resumes after it, nothing lost or repeated. A client that connects after the "
            "run's early events are gone (or after it ended, once its events expired) gets the stored "
            "run first, as a `status` event. A comment (`: keep-alive`) comes every SSE_KEEPALIVE_S "
            "seconds of silence."
        ),
        responses={
            200: ResponseSpec(
                cast(Any, RunEventDoc),  # a union of Structs: Litestar documents it as oneOf
                description=(
                    "The events, as `text/event-stream`. The schema is that of one event, its fields as an SSE "
                    "parser reads them: `id`, `event` (`status`, `step` or `delta`) and `data`, one line of JSON "
                    "text (the run, the step, or the fragment). Keep-alive comments carry no event."
                ),
                media_type="text/event-stream",
                generate_examples=False,
            ),
            **problem_responses(401, 404, 422, 503),
        },
    )
    @inject
    async def events(
        self,
        run_id: RunIdPath,
        owner: Owner,
        follow: FromDishka[FollowRun],
        last_event_id: LastEventId = "",
        after: AfterEvent = "",
    ) -> ServerSentEvent:
        """Stream the run's events."""
        start = last_event_id or after
        follower = await follow.execute(_run_id(run_id), owner, after=EventId(start) if start else None)
        return event_stream(follower)

    @post(
        "/{run_id:str}/cancel",
        status_code=202,
        summary="Cancel a run",
        description="A pending run is cancelled at once (200); a running one at its next step (202).",
        responses={200: ResponseSpec(RunView, description="Cancelled"), **problem_responses(401, 404, 409, 503)},
    )
    @inject
    async def cancel(self, run_id: RunIdPath, owner: Owner, cancel_run: FromDishka[CancelRun]) -> Response[RunView]:
        """Cancel a pending or running run."""
        run = await cancel_run.execute(_run_id(run_id), owner)
        status = 200 if run.is_terminal else 202
        return Response(run_view(run), status_code=status)

    @post(
        "/{run_id:str}/approvals",
        status_code=200,
        dto=None,  # the controller's DTO decodes RunCreate; this body is Litestar's to decode
        before_request=check_json_body,
        summary="Approve or reject a call the run waits on",
        description=(
            "For a run in `requires_action`: approve or reject one call of `required_action.calls` whose "
            "`kind` is `approval`, naming its `call_id` and `digest` (the approval is bound to that exact "
            "name and arguments). Once every waiting call is answered the run goes on, on any process or "
            "worker: an approved call runs, a rejected one becomes a tool error the model reads (with the "
            "reason). 409 `digest_mismatch` when the digest is not the call's, `unknown_call`, "
            "`already_answered`, `wrong_answer` (the call waits on a client tool's output), or `run_conflict` "
            "when the run waits on nothing."
        ),
        responses=problem_responses(400, 401, 404, 409, 413, 415, 422, 503),
    )
    @inject
    async def approve(
        self, run_id: RunIdPath, data: ApprovalBody, owner: Owner, answer_run: FromDishka[AnswerRun]
    ) -> RunView:
        """Approve or reject a waiting call."""
        run = await answer_run.execute(
            RunAnswer(
                run_id=_run_id(run_id),
                owner=owner,
                call_id=ToolCallId(data.call_id),
                decision=Decision(data.decision),
                digest=data.digest,
                reason=data.reason,
            )
        )
        return run_view(run)

    @post(
        "/{run_id:str}/tool_outputs",
        status_code=200,
        dto=None,  # the controller's DTO decodes RunCreate; this body is Litestar's to decode
        before_request=check_json_body,
        summary="Give the output of a client tool's call",
        description=(
            "For a run in `requires_action`: the output of one call of `required_action.calls` whose `kind` "
            "is `client_tool`. A string is the output as it is; any other JSON value is sent to the model as "
            "JSON text. The output is untrusted data, as any tool's: it goes to the model in a tool message. "
            "Once every waiting call is answered the run goes on. 409 as for approvals."
        ),
        responses=problem_responses(400, 401, 404, 409, 413, 415, 422, 503),
    )
    @inject
    async def tool_output(
        self, run_id: RunIdPath, data: ToolOutputBody, owner: Owner, answer_run: FromDishka[AnswerRun]
    ) -> RunView:
        """Give a client tool's output."""
        output = data.output if isinstance(data.output, str) else msgspec.json.encode(data.output).decode()
        run = await answer_run.execute(
            RunAnswer(
                run_id=_run_id(run_id),
                owner=owner,
                call_id=ToolCallId(data.call_id),
                decision=Decision.OUTPUT,
                digest=data.digest,
                output=output,
            )
        )
        return run_view(run)


def _run_id(raw: str) -> RunId:
    """The canonical spelling of a run id; what is not a UUID names no run (404), in every route alike."""
    try:
        return RunId(str(uuid.UUID(raw)))
    except ValueError:
        raise RunNotFound(f"no run with id {raw[:100]!r}") from None


def _moment(raw: str | None, name: str) -> datetime | None:
    """An RFC 3339 time with its zone (a naive time would be read in whatever zone the server is in)."""
    if raw is None:
        return None
    try:
        moment = msgspec.convert(raw, datetime)
    except msgspec.ValidationError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidListing(f"{name} must be an RFC 3339 time with a time zone, such as 2026-12-01T00:00:00Z")
    return moment


def _run_response(run: Run, headers: dict[str, str], *, created: bool) -> Response[RunView]:
    return waited_response(run_view(run), run, headers, at_rest_status=201 if created else 200)


def _fingerprint(data: RunCreate) -> str:
    """The same request body, whatever its key order or spacing, has the same fingerprint.

    `stream` is left out: it asks how to answer, not for another run (a replay streams, or not, as asked
    this time), and fingerprints stored before it existed still match.
    """
    canonical: Any = msgspec.to_builtins(data)
    canonical.pop("stream", None)
    return hashlib.sha256(msgspec.json.encode(canonical, order="sorted")).hexdigest()
