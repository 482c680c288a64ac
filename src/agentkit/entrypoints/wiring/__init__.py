"""The composition root: the one package that names concrete adapters.

It reads the settings once (`settings.load_settings`), runs start-up as an explicit step
(`startup.started_state`: embedded servers, migrations, the demo seed), builds the dishka container
(`container.make_container`) and hands the commands (`root.EnvironmentRoot`), the HTTP server
(`serving.serve_http`) and the `Agent` facade their dependencies.
"""

from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.settings import Settings, load_settings
from agentkit.entrypoints.wiring.startup import IN_MEMORY, StateEndpoints, locate_state, started_state

__all__ = [
    "IN_MEMORY",
    "Settings",
    "StateEndpoints",
    "load_settings",
    "locate_state",
    "make_container",
    "started_state",
]
