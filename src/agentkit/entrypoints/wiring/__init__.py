"""The composition root: the one package that names concrete adapters.

It reads the settings once (`settings.load_settings`), runs start-up as an explicit step
(`startup.started_state`: embedded servers, migrations, the demo seed), builds the dishka container
(`container.make_container`) and hands the commands (`root.EnvironmentRoot`), the HTTP server
(`serving.serve_http`) and the `Agent` facade their dependencies.

The names below are imported when first asked for: the `agentkit` console script lives in this
package (`wiring.main`), and `agentkit --help` or a bad setting must answer before SQLAlchemy,
Litestar or an LLM SDK is loaded.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_HOMES = {
    "make_container": "container",
    "Settings": "settings",
    "load_settings": "settings",
    "IN_MEMORY": "startup",
    "StateEndpoints": "startup",
    "locate_state": "startup",
    "started_state": "startup",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
