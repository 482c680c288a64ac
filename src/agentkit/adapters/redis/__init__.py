"""Redis adapters: conversation sessions and rate-limit windows."""

from agentkit.adapters.redis.client import create_redis
from agentkit.adapters.redis.rate_limiter import RedisRateLimiter
from agentkit.adapters.redis.sessions import RedisSessionStore

__all__ = ["RedisRateLimiter", "RedisSessionStore", "create_redis"]
