"""Which run changes are webhook events, and each event's stable id."""

import uuid
from typing import Final

from agentkit.domain.run import Run

# A namespace of AgentKit's own: the id of an event is the same in every process that sees it.
_NAMESPACE: Final = uuid.UUID("6f1b3f5e-8d0c-4f4e-9a51-3c2f0e7b9d14")
REQUIRES_ACTION: Final = "requires_action"


def event_type(run: Run) -> str | None:
    """`run.<status>` for a run that needs an answer or has ended (`run.succeeded`...), else None."""
    status = run.status.value
    if run.is_terminal or status == REQUIRES_ACTION:
        return f"run.{status}"
    return None


def event_key(run: Run) -> str:
    """What tells this event of the run from its others.

    A terminal status happens once. A run may pause for an answer more than once; each pause is
    taken up again by a new attempt of an executor, so the attempt tells the pauses apart.
    """
    if run.status.value == REQUIRES_ACTION:
        return f"{REQUIRES_ACTION}:{run.attempt}"
    return run.status.value


def delivery_id(run: Run) -> str:
    """The event's `webhook-id`: `msg_` and a UUID derived from the run and the event, stable across retries."""
    return "msg_" + uuid.uuid5(_NAMESPACE, f"{run.id}:{event_key(run)}").hex
