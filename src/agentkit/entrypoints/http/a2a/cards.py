"""An A2A agent card per agent profile: its skills from the profile's description and its tools."""

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, TransportProtocol

from agentkit._version import __version__
from agentkit.application.agents.queries import AgentInfo
from agentkit.domain.tools import ToolSchema
from agentkit.entrypoints.http.auth import API_KEY_HEADER

MODES = ["text/plain", "application/json"]
SCHEME = "ApiKey"


def agent_card(agent: AgentInfo, tools: tuple[ToolSchema, ...], *, url: str, v03: bool, push: bool) -> AgentCard:
    """The card of one agent, served at `url` (its JSON-RPC endpoint).

    Args:
        agent: The agent as listings show it.
        tools: Its tools, with their descriptions.
        url: The absolute URL of its JSON-RPC endpoint.
        v03: Also offer A2A v0.3 on the same endpoint.
        push: Push notifications can be asked for (the server signs webhooks).
    """
    interfaces = [
        AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version=PROTOCOL_VERSION_1_0)
    ]
    if v03:
        interfaces.append(
            AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version=PROTOCOL_VERSION_0_3)
        )
    description = agent.description or f"The AgentKit agent {agent.name!r}."
    skills = [
        AgentSkill(
            id=agent.name,
            name=agent.name,
            description=description,
            tags=["agentkit", *agent.tools],
            examples=[],
        )
    ]
    skills.extend(
        AgentSkill(
            id=f"{agent.name}.{tool.name}", name=tool.name, description=tool.description or tool.name, tags=["tool"]
        )
        for tool in tools
    )
    return AgentCard(
        name=agent.name,
        description=description,
        supported_interfaces=interfaces,
        provider=AgentProvider(organization="AgentKit", url=url),
        version=__version__,
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        security_schemes={
            SCHEME: SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header", name=API_KEY_HEADER, description="One of the server's API_KEYS."
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={SCHEME: StringList()})],
        default_input_modes=MODES,
        default_output_modes=MODES,
        skills=skills,
    )
