"""The async Redis client the Redis adapters share."""

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

MAX_CONNECTIONS = 100
CONNECTION_WAIT_S = 5.0


def create_redis(
    url: str,
    *,
    password: str | None = None,
    socket_timeout_s: float = 2.0,
    connect_timeout_s: float = 2.0,
    max_connections: int = MAX_CONNECTIONS,
    pool_timeout_s: float = CONNECTION_WAIT_S,
) -> "Redis":
    """A client for REDIS_URL (`redis://`, `rediss://` or `unix://`).

    REDIS_PASSWORD applies when the URL carries no password of its own. Responses stay bytes:
    the adapters decode JSON from bytes directly. The pool blocks (up to `pool_timeout_s`) when
    all its connections are busy, rather than failing the request outright as the default pool does
    past its limit.

    Every wait is bounded, so a Redis that is down or frozen costs a request at most a few seconds
    (and surfaces as StoreUnavailable): connecting by `connect_timeout_s`, each reply by
    `socket_timeout_s`. A command that fails on a broken connection is tried once more, at once, on
    a new one: after a restart of Redis the pooled connections are dead, and the first use of each
    would otherwise fail a request that a fresh connection serves. A timeout is not retried (it
    would double the wait).

    Args:
        url: Where Redis is.
        password: Used when the URL has none.
        socket_timeout_s: How long to wait for a reply.
        connect_timeout_s: How long to wait for a new connection.
        max_connections: The pool's size.
        pool_timeout_s: How long to wait for a pooled connection to come free.
    """
    pool = BlockingConnectionPool.from_url(
        url,
        password=password,
        decode_responses=False,
        health_check_interval=30,
        max_connections=max_connections,
        timeout=pool_timeout_s,
        socket_timeout=socket_timeout_s,
        socket_connect_timeout=connect_timeout_s,
        retry=Retry(NoBackoff(), retries=1, supported_errors=(RedisConnectionError,)),
    )
    return Redis.from_pool(pool)  # the client owns the pool and closes it with itself
