"""Which run changes are webhook events, and each event's stable id."""

import uuid
from typing import Final

from agentkit.domain.run import Run, RunStatus

# A namespace of AgentKit's own: the id of an event is the same in every process that sees it.
_NAMESPACE: Final = uuid.UUID("6f1b3f5e-8d0c-4f4e-9a51-3c2f0e7b9d14")


def event_type(run: Run) -> str | None:
    """`run.<status>` for a run that needs an answer or has ended (`run.succeeded`...), else None."""
    if run.status.is_at_rest:
        return f"run.{run.status.value}"
    return None


def event_key(run: Run) -> str:
    """What tells this event of the run from its others.

    A terminal status happens once. A run may pause for an answer more than once: the count of its
    pauses tells them apart.
    """
    if run.status is RunStatus.REQUIRES_ACTION:
        return f"{run.status.value}:{run.pauses}"
    return run.status.value


def delivery_id(run: Run) -> str:
    """The event's `webhook-id`: `msg_` and a UUID derived from the run and the event, stable across retries."""
    return "msg_" + uuid.uuid5(_NAMESPACE, f"{run.id}:{event_key(run)}").hex
