"""/v1/agents, /v1/tools (of an agent) and /v1/chat. Controllers only translate wire to use-case and back."""

from typing import Annotated, Any

from dishka.integrations.litestar import FromDishka, inject
from litestar import Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import BodyKwarg, QueryParameter

from agentkit.application.agents.profile import AGENT_NAME_PATTERN
from agentkit.application.agents.queries import AgentTools, ListAgents
from agentkit.application.runs.chat import ChatInput, ChatTurn
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.entrypoints.http.body import check_json_body
from agentkit.entrypoints.http.config import ApiConfig
from agentkit.entrypoints.http.dto.agents import AgentView, agent_view
from agentkit.entrypoints.http.dto.chat import ChatView, chat_create_type, chat_view
from agentkit.entrypoints.http.dto.tools import ToolView, tool_view
from agentkit.entrypoints.http.problems import problem_responses
from agentkit.entrypoints.http.responses import waited_response

Owner = NamedDependency[OwnerId]


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
    body_type = chat_create_type(config.max_goal_chars, config.agent_names)
    # the schema says what the decoder does: unknown fields are refused
    marker = BodyKwarg(media_type=RequestEncodingType.JSON, schema_extra={"additional_properties": False})
    body = Annotated[body_type, marker]  # type: ignore[valid-type]

    @post(
        "/chat",
        status_code=200,
        tags=["chat"],
        before_request=check_json_body,
        summary="Say something to an agent, in a session",
        description=(
            "A chat turn is a run whose goal is the message, in the session (a new one when `session_id` is "
            "left out: the answer names it). Same limits, trace, rate limit and admission as POST /v1/runs. "
            "Answers 200 once the run ended (whatever its status), or 202 with `Location` when it is still "
            "running after RESPONSE_TIMEOUT_S."
        ),
        responses={
            202: ResponseSpec(ChatView, description="Still running: poll `Location`"),
            **problem_responses(400, 401, 413, 415, 422, 429, 503),
        },
    )
    @inject
    async def chat(
        data: body,
        owner: Owner,
        turn: FromDishka[ChatTurn],
        api: FromDishka[ApiConfig],
    ) -> Response[ChatView]:
        """One chat turn."""
        result = await turn.execute(
            ChatInput(
                owner=owner,
                message=data.message,  # type: ignore[attr-defined]
                session_id=SessionId(data.session_id) if data.session_id else None,  # type: ignore[attr-defined]
                agent=data.agent,  # type: ignore[attr-defined]
            ),
            wait_s=api.response_timeout_s,
        )
        view = chat_view(result)
        return waited_response(view, result.run, {"Location": view.links.self}, at_rest_status=200)

    return chat
