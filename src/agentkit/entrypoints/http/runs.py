"""/v1/runs: create, read, trace and cancel runs. Controllers only translate wire to use-case and back."""

import hashlib
from typing import Annotated, Any

import msgspec
from dishka.integrations.litestar import FromDishka, inject
from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import BodyKwarg, FromPath, HeaderParameter, QueryParameter

from agentkit.application.runs.cancel_run import CancelRun
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.queries import GetTrace
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.application.settings import Settings
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.run import Run
from agentkit.entrypoints.http.dto import RunCreate, RunView, TraceView, run_view, step_view
from agentkit.entrypoints.http.problems import problem_responses

RETRY_AFTER_S = "1"
MAX_WAIT_S = 60.0

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=255, description="Makes retries safe."),
]
Prefer = Annotated[str | None, HeaderParameter(name="Prefer", description="`respond-async` answers 202 at once.")]
WaitSeconds = Annotated[
    float, QueryParameter(ge=0, le=MAX_WAIT_S, description="Wait up to this many seconds for the run to end.")
]
RunIdPath = FromPath[str]
# the schema says what the decoder does: unknown fields are refused
RunCreateBody = Annotated[
    RunCreate, BodyKwarg(media_type=RequestEncodingType.JSON, schema_extra={"additional_properties": False})
]
Owner = NamedDependency[OwnerId]


class RunsController(Controller):
    """Runs of the caller's API key; another key's runs do not exist for it (404)."""

    path = "/runs"
    tags = ["runs"]  # noqa: RUF012 - Litestar reads it as a class attribute

    @post(
        "/",
        status_code=201,
        summary="Run the agent on a goal",
        description=(
            "Answers 201 with the finished run, or 202 with `Location` and `Retry-After` when it is still "
            "running after RESPONSE_TIMEOUT_S (at once with `Prefer: respond-async`)."
        ),
        responses={
            202: ResponseSpec(RunView, description="Accepted and still running: poll `Location`"),
            **problem_responses(400, 401, 409, 413, 422, 429, 503),
        },
    )
    @inject
    async def create(
        self,
        data: RunCreateBody,
        owner: Owner,
        submit: FromDishka[SubmitRun],
        settings: FromDishka[Settings],
        idempotency_key: IdempotencyKey = None,
        prefer: Prefer = None,
    ) -> Response[RunView]:
        """Create a run."""
        respond_async = prefer is not None and "respond-async" in prefer.lower()
        result = await submit.execute(
            CreateRunInput(
                owner=owner,
                goal=data.goal,
                session_id=SessionId(data.session_id) if data.session_id else None,
                output_schema=data.output_schema,
                max_steps=data.max_steps,
                token_budget=data.token_budget,
                idempotency_key=idempotency_key,
                request_fingerprint=_fingerprint(data) if idempotency_key else None,
            ),
            wait_s=0.0 if respond_async else settings.response_timeout_s,
        )
        headers = {"Location": f"/v1/runs/{result.run.id}"}
        if result.replayed:
            headers["Idempotent-Replayed"] = "true"
        if respond_async:
            headers["Preference-Applied"] = "respond-async"
        return _run_response(result.run, headers, created=True)

    @get(
        "/{run_id:str}",
        summary="Read a run",
        description="`?wait=N` long-polls until the run ends.",
        responses=problem_responses(400, 401, 404, 422, 503),
    )
    @inject
    async def read(
        self, run_id: RunIdPath, owner: Owner, waiter: FromDishka[WaitForRun], wait: WaitSeconds = 0.0
    ) -> RunView:
        """Read a run, optionally waiting for it to end."""
        return run_view(await waiter.execute(RunId(run_id), owner, wait_s=wait))

    @get("/{run_id:str}/trace", summary="Read a run's trace", responses=problem_responses(401, 404, 503))
    @inject
    async def trace(self, run_id: RunIdPath, owner: Owner, get_trace: FromDishka[GetTrace]) -> TraceView:
        """Every LLM call and tool call of the run, in order."""
        run, steps = await get_trace.execute(RunId(run_id), owner)
        return TraceView(run_id=run.id, status=run.status.value, steps=[step_view(step) for step in steps])

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
        run = await cancel_run.execute(RunId(run_id), owner)
        status = 200 if run.is_terminal else 202
        return Response(run_view(run), status_code=status)


def _run_response(run: Run, headers: dict[str, str], *, created: bool) -> Response[RunView]:
    if run.is_terminal:
        return Response(run_view(run), status_code=201 if created else 200, headers=headers)
    return Response(run_view(run), status_code=202, headers={**headers, "Retry-After": RETRY_AFTER_S})


def _fingerprint(data: RunCreate) -> str:
    """The same request body, whatever its key order or spacing, has the same fingerprint."""
    canonical: Any = msgspec.to_builtins(data)
    return hashlib.sha256(msgspec.json.encode(canonical, order="sorted")).hexdigest()
