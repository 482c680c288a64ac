"""GetSession and DeleteSession: a session's history as the next run of it will see it, and forgetting it."""

from agentkit.application.errors import SessionNotFound
from agentkit.application.ports.session_store import SessionStore
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.messages import Message


class GetSession:
    """Read a session of the caller's.

    Rules: a session is its owner's only (another key's session of the same id is another
    session); one with no messages, never saved or expired, is not found.
    """

    def __init__(self, *, sessions: SessionStore) -> None:
        self._sessions = sessions

    async def execute(self, owner: OwnerId, session_id: SessionId) -> list[Message]:
        """The session's messages, oldest first (what the next run continues).

        Raises:
            SessionNotFound: no messages for this owner and id.
        """
        messages = await self._sessions.load(owner, session_id)
        if not messages:
            raise SessionNotFound(f"no session with id {session_id!r}")
        return messages


class DeleteSession:
    """Forget a session of the caller's: the next run with its id starts a new conversation."""

    def __init__(self, *, sessions: SessionStore) -> None:
        self._sessions = sessions

    async def execute(self, owner: OwnerId, session_id: SessionId) -> None:
        """Delete it.

        Raises:
            SessionNotFound: there was nothing to delete.
        """
        if not await self._sessions.delete(owner, session_id):
            raise SessionNotFound(f"no session with id {session_id!r}")
