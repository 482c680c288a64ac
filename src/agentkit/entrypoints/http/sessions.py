"""/v1/sessions/{id}: the history a next run of the session will see, and forgetting it."""

from typing import Annotated

from dishka.integrations.litestar import FromDishka, inject
from litestar import Controller, delete, get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from agentkit.application.sessions.manage import DeleteSession, GetSession
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.entrypoints.http.dto.messages import message_view
from agentkit.entrypoints.http.dto.sessions import SessionView
from agentkit.entrypoints.http.options import options_for
from agentkit.entrypoints.http.problems import problem_responses

SessionIdPath = Annotated[
    str,
    PathParameter(
        min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$", description="The session id runs were given."
    ),
]
Owner = NamedDependency[OwnerId]


class SessionsController(Controller):
    """Sessions of the caller's API key; another key's session of the same id is another session."""

    path = "/sessions"
    tags = ["sessions"]  # noqa: RUF012 - Litestar reads it as a class attribute
    allowed = options_for("/{session_id:str}", "GET", "DELETE")

    @get(
        "/{session_id:str}",
        summary="Read a session's history",
        description="The messages the next run with this session id continues from (never the system prompt).",
        responses=problem_responses(401, 404, 422, 503),
    )
    @inject
    async def read(self, session_id: SessionIdPath, owner: Owner, get_session: FromDishka[GetSession]) -> SessionView:
        """The session's messages, oldest first."""
        messages = await get_session.execute(owner, SessionId(session_id))
        return SessionView(session_id=session_id, messages=[message_view(m) for m in messages])

    @delete(
        "/{session_id:str}",
        status_code=204,
        summary="Forget a session",
        description="The next run with this session id starts a new conversation.",
        responses=problem_responses(401, 404, 422, 503),
    )
    @inject
    async def forget(self, session_id: SessionIdPath, owner: Owner, delete_session: FromDishka[DeleteSession]) -> None:
        """Delete the session's history."""
        await delete_session.execute(owner, SessionId(session_id))
