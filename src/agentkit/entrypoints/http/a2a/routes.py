"""The A2A routes: each agent's card, and its JSON-RPC endpoint, the a2a-sdk's dispatcher mounted in the app.

- GET /.well-known/agent-card.json: the default agent's card; GET /a2a/{agent}/.well-known/agent-card.json:
  any agent's. Cards are public (no key), as A2A clients discover agents before they authenticate.
- POST /a2a/{agent}: JSON-RPC 2.0, behind the API key (the same guard as /v1: 401 without it). The
  body is read here, under MAX_BODY_BYTES, and handed to the SDK's `JsonRpcDispatcher`, which parses
  it (malformed JSON-RPC is a JSON-RPC error, never a 500), routes v1.0 methods by the `A2A-Version`
  header and v0.3's (`message/send`...) through its compatibility adapter, and calls
  `AgentKitRequestHandler` with the caller's owner id and the request's dishka container.
"""

from typing import Annotated, Any, cast

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from dishka.integrations.litestar import FromDishka, inject
from litestar import Request, Response, asgi, get
from litestar.exceptions import ClientException, NotFoundException
from litestar.handlers import ASGIRouteHandler, HTTPRouteHandler
from litestar.params import PathParameter
from litestar.types import Receive, Scope, Send
from starlette.requests import Request as StarletteRequest
from starlette.responses import JSONResponse

from agentkit.application.agents.profile import DEFAULT_AGENT
from agentkit.application.agents.queries import AgentTools, ListAgents
from agentkit.entrypoints.http.a2a.cards import agent_card
from agentkit.entrypoints.http.a2a.handler import AgentKitRequestHandler
from agentkit.entrypoints.http.auth import require_api_key
from agentkit.entrypoints.http.config import ApiConfig

PATH = "/a2a"


class _CallContext(DefaultServerCallContextBuilder):
    """The SDK's call context, with what the route's guard and dishka put in the request's state."""

    def build(self, request: StarletteRequest) -> ServerCallContext:
        """The SDK's context (headers: the A2A-Version), plus `owner` and `container`."""
        context = super().build(request)
        state = request.scope["state"]
        context.state["owner"] = state["owner"]
        context.state["container"] = state["dishka_container"]
        return context


def a2a_routes(config: ApiConfig) -> list[HTTPRouteHandler | ASGIRouteHandler]:
    """The cards and each configured agent's JSON-RPC endpoint."""
    dispatchers = {
        name: JsonRpcDispatcher(
            AgentKitRequestHandler(agent=name, blocking_wait_s=config.a2a_wait_s, webhooks=config.webhooks),
            context_builder=_CallContext(),
            enable_v0_3_compat=config.a2a_v03,
        )
        for name in config.agent_names
    }

    # one route per agent, each at a static path: Litestar 2.25 finds no path parameters of an ASGI route
    rpc_routes = [_rpc_route(name, dispatcher, config.max_body_bytes) for name, dispatcher in dispatchers.items()]

    @get("/.well-known/agent-card.json", include_in_schema=False)
    @inject
    async def default_card(
        request: Request[Any, Any, Any], agents: FromDishka[ListAgents], tools: FromDishka[AgentTools]
    ) -> Response[dict[str, Any]]:
        """The default agent's card."""
        return await _card(request, DEFAULT_AGENT, agents, tools, config)

    @get(f"{PATH}/{{agent:str}}/.well-known/agent-card.json", include_in_schema=False)
    @inject
    async def card(
        request: Request[Any, Any, Any],
        agent: Annotated[str, PathParameter(description="The agent's name.")],
        agents: FromDishka[ListAgents],
        tools: FromDishka[AgentTools],
    ) -> Response[dict[str, Any]]:
        """An agent's card."""
        return await _card(request, agent, agents, tools, config)

    return [*rpc_routes, default_card, card]


def _rpc_route(agent: str, dispatcher: JsonRpcDispatcher, max_body_bytes: int) -> ASGIRouteHandler:
    """POST /a2a/{agent}: the agent's JSON-RPC endpoint."""

    @asgi(f"{PATH}/{agent}", guards=[require_api_key], copy_scope=True, include_in_schema=False, name=f"a2a-{agent}")
    async def rpc(scope: Scope, receive: Receive, send: Send) -> None:
        """One JSON-RPC request to the agent."""
        if scope.get("method") != "POST":
            refused = JSONResponse({"detail": "POST a JSON-RPC request"}, status_code=405, headers={"Allow": "POST"})
            await refused(cast(Any, scope), cast(Any, receive), cast(Any, send))
            return
        body = await _read_body(receive, max_body_bytes)
        response = await dispatcher.handle_requests(StarletteRequest(cast(Any, scope), _replaying(body, receive)))
        await response(cast(Any, scope), cast(Any, receive), cast(Any, send))

    return rpc


async def _card(
    request: Request[Any, Any, Any], name: str, agents: ListAgents, tools: AgentTools, config: ApiConfig
) -> Response[dict[str, Any]]:
    found = next((info for info in await agents.execute() if info.name == name), None)
    if found is None:
        raise NotFoundException(f"no agent named {name!r}")
    url = f"{str(request.base_url).rstrip('/')}{PATH}/{name}"
    built = agent_card(found, await tools.execute(name), url=url, v03=config.a2a_v03, push=config.webhooks)
    return Response(agent_card_to_dict(built), media_type="application/json")


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The request's body, of at most `limit` bytes (MAX_BODY_BYTES, as on every route): 413 beyond it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientException("the client went away", status_code=400)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ClientException(f"the body is larger than {limit} bytes", status_code=413)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Any:
    """A receive that gives the body already read, then the connection's own messages (a disconnect)."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
