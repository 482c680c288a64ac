"""GET /v1/sessions/{id}: a session's history."""

import msgspec

from agentkit.entrypoints.http.dto.messages import MessageView


class SessionView(msgspec.Struct, kw_only=True):
    """A session's history: what the next run with this session id continues from."""

    session_id: str
    messages: list[MessageView]
