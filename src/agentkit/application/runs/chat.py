"""ChatTurn: one chat message as a run in a session, answered when the run ends (or when the wait does)."""

import msgspec

from agentkit.application.ports.id_generator import IdGenerator
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import Run


class ChatInput(msgspec.Struct, frozen=True, kw_only=True):
    """A chat message.

    Attributes:
        owner: Who sends it (an API key id).
        message: What the user says.
        session_id: The conversation it continues; a new one when None.
        agent: The agent that answers (None: `default`).
        stream: The client watches the turn as it is written (its run is created with `stream`).
    """

    owner: OwnerId
    message: str
    session_id: SessionId | None = None
    agent: str | None = None
    stream: bool = False


class ChatResult(msgspec.Struct, frozen=True, kw_only=True):
    """The session the turn belongs to and its run (terminal unless the wait ended first)."""

    session_id: SessionId
    run: Run


class ChatTurn:
    """A chat turn is a run whose goal is the message, in the message's session.

    Rules:
    - It is a run like any other (SubmitRun): the same validation, agents, limits, admission, rate
      limit, trace and session memory; nothing is stored for a refused message.
    - Without a session id a new session is made; the answer names it, so the next message continues it.
    """

    def __init__(self, *, submit: SubmitRun, ids: IdGenerator) -> None:
        self._submit = submit
        self._ids = ids

    async def execute(self, inp: ChatInput, *, wait_s: float) -> ChatResult:
        """Run the turn and wait up to `wait_s` for its answer."""
        session = inp.session_id or SessionId(f"chat-{self._ids.new_run_id()}")
        result = await self._submit.execute(
            CreateRunInput(owner=inp.owner, goal=inp.message, session_id=session, agent=inp.agent, stream=inp.stream),
            wait_s=wait_s,
        )
        return ChatResult(session_id=session, run=result.run)
