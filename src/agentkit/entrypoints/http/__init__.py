"""The REST API (Litestar)."""

from agentkit.entrypoints.http.app import create_app
from agentkit.entrypoints.http.config import ApiConfig

__all__ = ["ApiConfig", "create_app"]
