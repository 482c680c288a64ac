"""The a2a-sdk's own client on an AgentKit app served on loopback: what any A2A client does, nothing of ours."""

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import AgentCard, AgentInterface, StreamResponse

from tests.http_fixtures import KEY_A, ApiClient
from tests.sse_fixtures import served

WAIT_S = 60.0  # a bound for a hung test, never a timing assertion


@dataclass
class A2A:
    """A client of one agent, the card it resolved, and the HTTP client under both."""

    client: Client
    card: AgentCard
    chosen: AgentCard
    http: httpx.AsyncClient
    url: str

    def blocking(self) -> Client:
        """Another client of the same agent that does not stream (SendMessage rather than SendStreamingMessage)."""
        return ClientFactory(ClientConfig(httpx_client=self.http, streaming=False)).create(self.chosen)


@contextlib.asynccontextmanager
async def a2a_client(
    api: ApiClient,
    *,
    agent_path: str = "",
    key: str | None = KEY_A,
    streaming: bool = False,
    version: str = "1.0",
) -> AsyncIterator[A2A]:
    """The SDK's client of the agent at `agent_path` (the default agent's card when empty), over loopback HTTP.

    `version` picks the card's interface of that protocol version, as a client of that version would
    (the SDK chooses v1.0 when a card offers it; a v0.3 client knows only v0.3's).
    """
    async with served(api.app) as url, httpx.AsyncClient(timeout=WAIT_S) as http:
        if key is not None:
            http.headers["X-API-Key"] = key
        card = await A2ACardResolver(http, url + agent_path).get_agent_card()
        chosen = AgentCard()
        chosen.CopyFrom(card)
        del chosen.supported_interfaces[:]
        chosen.supported_interfaces.extend(_of_version(card, version))
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(chosen)
        if version == "0.3":
            http.headers.pop("A2A-Version", None)  # the factory's default; a v0.3 client sends none
        yield A2A(client=client, card=card, chosen=chosen, http=http, url=url)


def _of_version(card: AgentCard, version: str) -> list[AgentInterface]:
    return [interface for interface in card.supported_interfaces if interface.protocol_version == version]


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    """Every event of a stream, in order."""
    return [event async for event in events]
