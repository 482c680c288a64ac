"""Redis adapters: conversation sessions, rate-limit windows, run events and run event logs."""

from agentkit.adapters.redis.client import MAX_CONNECTIONS, create_redis
from agentkit.adapters.redis.events import RedisRunEvents
from agentkit.adapters.redis.rate_limiter import RedisRateLimiter
from agentkit.adapters.redis.run_event_log import RedisRunEventLog
from agentkit.adapters.redis.sessions import RedisSessionStore

__all__ = [
    "MAX_CONNECTIONS",
    "RedisRateLimiter",
    "RedisRunEventLog",
    "RedisRunEvents",
    "RedisSessionStore",
    "create_redis",
]
