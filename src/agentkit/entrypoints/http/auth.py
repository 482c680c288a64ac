"""API keys: `X-API-Key` against API_KEYS, compared in constant time, never logged; failures throttled."""

import hashlib
import hmac
from collections.abc import Iterable
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.domain.ids import OwnerId
from agentkit.entrypoints.http.auth_throttle import FailedKeyThrottle, client_address
from agentkit.entrypoints.http.problems import Unauthorized

API_KEY_HEADER = "X-API-Key"


class ApiKeys:
    """The configured keys; a run belongs to the key that created it, named by a hash of the key."""

    def __init__(self, keys: Iterable[str]) -> None:
        self._keys = [(key.encode(), owner_id(key)) for key in keys]

    def owner(self, presented: str | None) -> OwnerId:
        """The owner id of a presented key.

        Raises:
            Unauthorized: the key is missing or not configured.
        """
        if not presented:
            raise Unauthorized(f"send an API key in the {API_KEY_HEADER} header")
        found = self._match(presented)
        if found is None:
            raise Unauthorized("the API key is not valid")
        return found

    def valid(self, presented: str) -> bool:
        """Whether a presented key is configured (the same constant-time comparison)."""
        return bool(presented) and self._match(presented) is not None

    def _match(self, presented: str) -> OwnerId | None:
        candidate = presented.encode()
        found: OwnerId | None = None
        for key, owner in self._keys:
            # compare against every key, so timing tells nothing about which one nearly matched
            if hmac.compare_digest(candidate, key):
                found = owner
        return found


def owner_id(key: str) -> OwnerId:
    """A stable id for a key that does not reveal it (the key itself is never stored)."""
    return OwnerId("key_" + hashlib.sha256(key.encode()).hexdigest()[:16])


async def require_api_key(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Litestar guard on every /v1 route: a valid key, or 401. Remembers the caller's owner id.

    Runs before the body is read or anything is looked up. An address with too many failed attempts
    gets 429 before its key is compared (see FailedKeyThrottle); a valid key costs no I/O at all.
    Async, as a sync guard would run in a worker thread: a thread hop on every request.
    """
    keys: ApiKeys = connection.app.state.api_keys
    throttle: FailedKeyThrottle = connection.app.state.auth_throttle
    address = client_address(connection.client.host if connection.client else None)
    throttle.check(address)
    try:
        connection.state.owner = keys.owner(connection.headers.get(API_KEY_HEADER))
    except Unauthorized:
        limiter = await connection.app.state.dishka_container.get(RateLimiter)
        await throttle.failed(address, limiter)
        raise


async def authenticate(request: Request[Any, Any, Any]) -> OwnerId:
    """Litestar dependency: the owner id the guard found."""
    owner: OwnerId = request.state.owner
    return owner
