"""Hidden context: values a tool receives by type that the model never sees."""

import msgspec

from agentkit.domain.ids import OwnerId, RunId, SessionId


class ToolContext(msgspec.Struct, frozen=True, kw_only=True):
    """What the runtime knows about the call in progress.

    A tool asks for it by annotating a parameter with `ToolContext` (or a subclass); that
    parameter is left out of the tool's schema and filled in at execution. Subclass it to hand
    tools your own clients, and give the registry a factory for the subclass.

    Attributes:
        run_id: The run the call belongs to.
        owner: The API key id (or local user) that owns the run.
        session_id: The conversation the run continues, if any.
    """

    run_id: RunId
    owner: OwnerId
    session_id: SessionId | None = None
