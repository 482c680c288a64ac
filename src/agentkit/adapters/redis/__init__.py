"""Redis adapters: conversation sessions, rate-limit windows and run events."""

from agentkit.adapters.redis.client import create_redis
from agentkit.adapters.redis.events import RedisRunEvents
from agentkit.adapters.redis.rate_limiter import RedisRateLimiter
from agentkit.adapters.redis.sessions import RedisSessionStore

__all__ = ["RedisRateLimiter", "RedisRunEvents", "RedisSessionStore", "create_redis"]
