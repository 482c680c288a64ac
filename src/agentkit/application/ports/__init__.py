"""Ports: the Protocols the application needs from the outside world, one per module."""

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.rate_limiter import RateDecision, RateLimiter
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceReader, TraceSink

__all__ = [
    "Clock",
    "IdGenerator",
    "LLMClient",
    "RateDecision",
    "RateLimiter",
    "RunRepository",
    "SessionStore",
    "TraceReader",
    "TraceSink",
]
