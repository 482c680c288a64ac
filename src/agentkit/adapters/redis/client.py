"""The async Redis client the Redis adapters share."""

from redis.asyncio import Redis


def create_redis(url: str, *, password: str | None = None) -> "Redis":
    """A client for REDIS_URL (`redis://`, `rediss://` or `unix://`).

    REDIS_PASSWORD applies when the URL carries no password of its own.
    Responses stay bytes: the adapters decode JSON from bytes directly.
    """
    return Redis.from_url(url, password=password, decode_responses=False, health_check_interval=30)
