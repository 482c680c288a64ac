"""/v1/agents, /v1/tools (of an agent) and /v1/chat. Controllers only translate wire to use-case and back."""

from dataclasses import dataclass
from typing import Annotated, Any

from dishka.integrations.litestar import FromDishka, inject
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIResponse, Operation
from litestar.params import BodyKwarg, QueryParameter
from litestar.response import ServerSentEvent

from agentkit.application.agents.profile import AGENT_NAME_PATTERN
from agentkit.application.agents.queries import AgentTools, ListAgents
from agentkit.application.runs.chat import ChatInput, ChatTurn
from agentkit.application.runs.follow_run import FollowRun
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.entrypoints.http.body import check_body
from agentkit.entrypoints.http.chat_body import ChatBodyDTO, ChatRequest
from agentkit.entrypoints.http.config import ApiConfig
from agentkit.entrypoints.http.dto.agents import AgentView, agent_view
from agentkit.entrypoints.http.dto.chat import ChatView, chat_view
from agentkit.entrypoints.http.dto.tools import ToolView, tool_view
from agentkit.entrypoints.http.problems import problem_responses
from agentkit.entrypoints.http.responses import waited_response
from agentkit.entrypoints.http.streaming import FormatQuery, StreamFormat, run_stream, stream_format, stream_response

Owner = NamedDependency[OwnerId]
# decoded by ChatBodyDTO (either shape), which also writes its schema
ChatBody = Annotated[ChatRequest, BodyKwarg(media_type=RequestEncodingType.JSON)]


@get("/agents", tags=["agents"], summary="List the configured agents", responses=problem_responses(401))
@inject
async def list_agents(agents: FromDishka[ListAgents]) -> list[AgentView]:
    """Every agent (`default` first) with its model, tools, terminal tools and limits."""
    return [agent_view(info) for info in await agents.execute()]


def agent_query(agent_names: tuple[str, ...]) -> Any:
    """The `?agent=` parameter; its document lists the configured agents."""
    return Annotated[
        str | None,
        QueryParameter(
            description="Only this agent's tools (its MCP servers' included); all registered tools when left out.",
            pattern=AGENT_NAME_PATTERN,
            max_length=64,
            schema_extra={"enum": list(agent_names)},
        ),
    ]


def tools_route(config: ApiConfig) -> Any:
    """GET /v1/tools for this configuration."""
    agent_param = agent_query(config.agent_names)

    @get(
        "/tools",
        tags=["tools"],
        summary="List the registered tools, or one agent's",
        responses=problem_responses(401, 422),
    )
    @inject
    async def list_tools(agent_tools: FromDishka[AgentTools], agent: agent_param = None) -> list[ToolView]:  # type: ignore[valid-type]
        """The tools with the JSON schemas models see: every registered tool, or those of `?agent=`."""
        return [tool_view(schema) for schema in await agent_tools.execute(agent)]

    return list_tools


def chat_route(config: ApiConfig) -> Any:
    """POST /v1/chat for this configuration: the message limit and the agents in its document."""
    body_dto = ChatBodyDTO.for_settings(config.max_goal_chars, config.agent_names)

    @post(
        "/chat",
        status_code=200,
        tags=["chat"],
        dto=body_dto,
        return_dto=None,
        before_request=check_body,
        operation_class=ChatOperation,
        summary="Say something to an agent, in a session",
        description=(
            "A chat turn is a run whose goal is the message, in the session (a new one when `session_id` is "
            "left out: the answer names it). Same limits, trace, rate limit and admission as POST /v1/runs. "
            "Answers 200 once the run ended (whatever its status), or 202 with `Location` when it is still "
            "running after RESPONSE_TIMEOUT_S.\n\n"
            '**Streaming**: with `"stream": true`, `Accept: text/event-stream` or `?format=`, the answer is 200 '
            "with the turn's Server-Sent Events from its start to its end, as POST /v1/runs streams "
            "(`format=agentkit`, the default, or `format=vercel`).\n\n"
            "**The Vercel AI SDK**: `useChat` (its default transport) can post here as it is: a body with "
            "`messages` is its request. The chat's `id` is the session; the newest user message's text is the "
            "turn (the session holds the conversation before it); the answer is the UI message stream "
            "(`format=vercel`) unless `format` says otherwise."
        ),
        responses={
            200: stream_response(
                "The turn ended (`application/json`, whatever the run's status), or, streamed, its events until "
                "its end (`text/event-stream`; `Location` names the run). The stream's schema is that of one "
                "event: `format=agentkit` as GET /v1/runs/{id}/events, `format=vercel` a UI message chunk "
                "(`data:` only), then `data: [DONE]`."
            ),
            202: ResponseSpec(ChatView, description="Still running: poll `Location`", generate_examples=False),
            **problem_responses(400, 401, 413, 415, 422, 429, 503),
        },
    )
    @inject
    async def chat(
        request: Request[Any, Any, Any],
        data: ChatBody,
        owner: Owner,
        turn: FromDishka[ChatTurn],
        follow: FromDishka[FollowRun],
        api: FromDishka[ApiConfig],
        format: FormatQuery = None,
    ) -> Response[ChatView] | ServerSentEvent:
        """One chat turn (streamed, when asked)."""
        form = stream_format(request, asked=data.stream, chosen=format)
        if form is None and data.ui:
            form = StreamFormat.VERCEL  # the AI SDK's transport reads nothing else
        result = await turn.execute(
            ChatInput(
                owner=owner,
                message=data.message,
                session_id=SessionId(data.session_id) if data.session_id else None,
                agent=data.agent,
                stream=form is not None,
            ),
            wait_s=0.0 if form is not None else api.response_timeout_s,
        )
        view = chat_view(result)
        if form is not None:
            return await run_stream(follow, result.run, owner, form, {"Location": view.links.self})
        return waited_response(view, result.run, {"Location": view.links.self}, at_rest_status=200)

    return chat


@dataclass
class ChatOperation(Operation):
    """POST /v1/chat's document: under 200, the turn as JSON (ended) beside the stream (when asked)."""

    def __post_init__(self) -> None:
        """Add the JSON answer (the 202's ChatView) to the 200, which documents the stream."""
        responses = self.responses or {}
        streamed, waiting = responses.get("200"), responses.get("202")
        if isinstance(streamed, OpenAPIResponse) and isinstance(waiting, OpenAPIResponse):
            streamed.content = {**(waiting.content or {}), **(streamed.content or {})}
