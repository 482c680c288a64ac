"""A2A (Agent2Agent, v1.0 with v0.3 compatibility): every agent profile reachable by any A2A client."""

from agentkit.entrypoints.http.a2a.routes import a2a_routes

__all__ = ["a2a_routes"]
