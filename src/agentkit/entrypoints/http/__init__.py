"""The REST API (Litestar).

`ApiConfig` is light; `create_app` (and Litestar with it) is imported when first asked for, so the
`Agent` facade and `agentkit run`, whose containers name `ApiConfig`, never load the web framework.
"""

from typing import TYPE_CHECKING

from agentkit.entrypoints.http.config import ApiConfig

if TYPE_CHECKING:
    from agentkit.entrypoints.http.app import create_app

__all__ = ["ApiConfig", "create_app"]


def __getattr__(name: str) -> object:
    if name == "create_app":
        from agentkit.entrypoints.http.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
