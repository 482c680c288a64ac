"""The Redis SessionStore: one JSON value per (owner, session id), with a TTL and a sliding window."""

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import quote

import msgspec
import structlog
from redis.asyncio import Redis

from agentkit.adapters.outage import store_outage
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.session_store import SessionStore
from agentkit.domain.history import window
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.messages import Message

_log = structlog.get_logger(__name__)
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(list[Message])
_DELETE_BATCH = 500
_PRUNE_LUA = """
local keys = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local removed = 0
for _, key in ipairs(keys) do
    removed = removed + redis.call('DEL', key)
    redis.call('ZREM', KEYS[1], key)
end
return {#keys, removed}
"""


_redis = store_outage("Redis")


class RedisSessionStore(SessionStore):
    """Histories as JSON strings under `{prefix}session:{owner}:{session}`, expiring `ttl_s` after the last save.

    The window (`agentkit.domain.history.window`) is applied on save: system messages and the newest
    others are kept, and a tool result never outlives the assistant turn that asked for it.
    A sorted set `{prefix}sessions` scores each session key by its last save, so `delete_saved_before`
    finds old sessions without scanning the keyspace.

    Args:
        client: The Redis client.
        clock: Wall time for the save index.
        ttl_s: Seconds a session lives after its last save (SESSION_TTL_S).
        max_messages: The window's size (SESSION_MAX_MESSAGES).
        prefix: Namespace of every key, so several deployments (or tests) can share one Redis.
    """

    def __init__(
        self, client: Redis, *, clock: Clock, ttl_s: int = 3600, max_messages: int = 50, prefix: str = "agentkit:"
    ) -> None:
        self._client = client
        self._clock = clock
        self._ttl_s = ttl_s
        self._max_messages = max_messages
        self._prefix = prefix
        self._index = f"{prefix}sessions"
        self._prune = client.register_script(_PRUNE_LUA)

    def _key(self, owner: OwnerId, session_id: SessionId) -> str:
        # Quoted, so a ':' inside an owner or session id cannot make two sessions share a key.
        return f"{self._prefix}session:{quote(owner, safe='')}:{quote(session_id, safe='')}"

    @_redis
    async def load(self, owner: OwnerId, session_id: SessionId) -> list[Message]:
        """The session's messages, oldest first; empty for a new, expired or unreadable session."""
        raw = await self._client.get(self._key(owner, session_id))
        if raw is None:
            return []
        try:
            return _decoder.decode(raw)
        except msgspec.DecodeError as exc:
            # A history this version cannot read (written by an older one) starts the conversation afresh.
            _log.warning("session_unreadable", session_id=session_id, error=str(exc)[:200])
            return []

    @_redis
    async def save(self, owner: OwnerId, session_id: SessionId, messages: Sequence[Message]) -> None:
        """Store the newest window of the history and renew the TTL."""
        key = self._key(owner, session_id)
        now = self._clock.now().timestamp()
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.set(key, _encoder.encode(window(messages, self._max_messages)), ex=self._ttl_s)
            pipe.zadd(self._index, {key: now})
            # Keys that expired on their own leave the index here, so it stays as small as the live sessions.
            pipe.zremrangebyscore(self._index, "-inf", now - self._ttl_s)
            await pipe.execute()

    @_redis
    async def delete(self, owner: OwnerId, session_id: SessionId) -> bool:
        """Forget the session (and its place in the save index); say whether it existed."""
        key = self._key(owner, session_id)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.zrem(self._index, key)
            removed, _ = await pipe.execute()
        return bool(removed)

    @_redis
    async def delete_saved_before(self, cutoff: datetime) -> int:
        """Forget sessions last saved before `cutoff`; return how many still existed."""
        deleted = 0
        while True:
            # One script per batch: a session saved meanwhile has a newer score and is not selected.
            seen, removed = await self._prune(keys=[self._index], args=[f"({cutoff.timestamp()}", _DELETE_BATCH])
            deleted += int(removed)
            if int(seen) < _DELETE_BATCH:
                return deleted
