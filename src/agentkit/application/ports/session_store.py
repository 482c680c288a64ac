"""The SessionStore port: short-term conversation memory."""

from abc import abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.messages import Message


class SessionStore(Protocol):
    """Message history per (owner, session id), with a TTL and a bounded window."""

    @abstractmethod
    async def load(self, owner: OwnerId, session_id: SessionId) -> list[Message]:
        """The session's messages, oldest first; empty for a new or expired session."""

    @abstractmethod
    async def save(self, owner: OwnerId, session_id: SessionId, messages: Sequence[Message]) -> None:
        """Replace the session's history, keeping the newest window and renewing the TTL."""

    @abstractmethod
    async def delete(self, owner: OwnerId, session_id: SessionId) -> bool:
        """Forget the session; return whether it held any messages."""

    @abstractmethod
    async def delete_saved_before(self, cutoff: datetime) -> int:
        """Forget sessions last saved before `cutoff` (`agentkit prune`); return how many still existed."""
