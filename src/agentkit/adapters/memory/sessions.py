"""An in-memory SessionStore with the same window and TTL rules as the Redis one."""

from collections.abc import Sequence
from datetime import datetime

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.session_store import SessionStore
from agentkit.domain.history import window
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.messages import Message


class InMemorySessionStore(SessionStore):
    """Histories in a dict, trimmed to a window and forgotten after a TTL of the given clock."""

    def __init__(self, clock: Clock, *, ttl_s: float = 3600, max_messages: int = 50) -> None:
        self._clock = clock
        self._ttl_s = ttl_s
        self._max_messages = max_messages
        self._sessions: dict[tuple[OwnerId, SessionId], tuple[float, list[Message]]] = {}
        self._saved_at: dict[tuple[OwnerId, SessionId], datetime] = {}

    async def load(self, owner: OwnerId, session_id: SessionId) -> list[Message]:
        """The session's messages, or none when it is new or expired."""
        entry = self._sessions.get((owner, session_id))
        if entry is None:
            return []
        expires, messages = entry
        if self._clock.monotonic() >= expires:
            del self._sessions[(owner, session_id)]
            del self._saved_at[(owner, session_id)]
            return []
        return list(messages)

    async def save(self, owner: OwnerId, session_id: SessionId, messages: Sequence[Message]) -> None:
        """Keep the newest window and renew the TTL."""
        kept = window(messages, self._max_messages)
        self._sessions[(owner, session_id)] = (self._clock.monotonic() + self._ttl_s, kept)
        self._saved_at[(owner, session_id)] = self._clock.now()

    async def delete(self, owner: OwnerId, session_id: SessionId) -> bool:
        """Forget the session; say whether it held messages that had not expired."""
        alive = bool(await self.load(owner, session_id))
        self._sessions.pop((owner, session_id), None)
        self._saved_at.pop((owner, session_id), None)
        return alive

    async def delete_saved_before(self, cutoff: datetime) -> int:
        """Forget sessions last saved before the cutoff; count those that had not expired yet."""
        now = self._clock.monotonic()
        doomed = [key for key, saved_at in self._saved_at.items() if saved_at < cutoff]
        alive = 0
        for key in doomed:
            expires, _ = self._sessions.pop(key)
            del self._saved_at[key]
            alive += expires > now
        return alive
