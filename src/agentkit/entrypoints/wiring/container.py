"""make_container: the one place the concrete adapters are put together."""

from dishka import AsyncContainer, Provider, make_async_container

from agentkit.entrypoints.wiring.providers.agents import AgentsProvider
from agentkit.entrypoints.wiring.providers.core import CoreProvider, ObserversProvider
from agentkit.entrypoints.wiring.providers.health import HealthProvider
from agentkit.entrypoints.wiring.providers.observability import ObservabilityProvider
from agentkit.entrypoints.wiring.providers.scheduling import QueueProvider, scheduling_for
from agentkit.entrypoints.wiring.providers.state import StateProvider
from agentkit.entrypoints.wiring.providers.tools import ToolsProvider
from agentkit.entrypoints.wiring.providers.webhooks import WebhooksProvider
from agentkit.entrypoints.wiring.settings import Settings
from agentkit.entrypoints.wiring.startup import IN_MEMORY, StateEndpoints


def make_container(settings: Settings, *overrides: Provider, endpoints: StateEndpoints = IN_MEMORY) -> AsyncContainer:
    """The container for these settings on the servers start-up located; later providers win.

    Args:
        settings: The whole configuration (only providers read it).
        overrides: Providers that replace defaults (tests swap an adapter, the CLI adds observers).
        endpoints: Where state lives (`startup.started_state`); by default everything in memory.
    """
    return make_async_container(
        CoreProvider(),
        StateProvider(),
        HealthProvider(),
        ToolsProvider(),
        QueueProvider(),
        scheduling_for(settings),
        AgentsProvider(),
        ObserversProvider(),
        ObservabilityProvider(),
        WebhooksProvider(),
        *overrides,
        context={Settings: settings, StateEndpoints: endpoints},
    )
