"""The async Redis client the Redis adapters share."""

from redis.asyncio import BlockingConnectionPool, Redis

MAX_CONNECTIONS = 100
CONNECTION_WAIT_S = 5.0


def create_redis(url: str, *, password: str | None = None) -> "Redis":
    """A client for REDIS_URL (`redis://`, `rediss://` or `unix://`).

    REDIS_PASSWORD applies when the URL carries no password of its own. Responses stay bytes:
    the adapters decode JSON from bytes directly. The pool blocks (up to CONNECTION_WAIT_S) when
    all its connections are busy, rather than failing the request outright as the default pool does
    past its limit.
    """
    pool = BlockingConnectionPool.from_url(
        url,
        password=password,
        decode_responses=False,
        health_check_interval=30,
        max_connections=MAX_CONNECTIONS,
        timeout=CONNECTION_WAIT_S,
    )
    return Redis.from_pool(pool)  # the client owns the pool and closes it with itself
