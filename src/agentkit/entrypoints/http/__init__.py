"""The REST API (Litestar)."""

from agentkit.entrypoints.http.app import create_app

__all__ = ["create_app"]
