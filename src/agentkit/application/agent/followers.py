"""FollowedRuns: which runs executing here someone is watching, so their LLM calls stream."""

from typing import Final

from agentkit.application.ports.clock import Clock
from agentkit.domain.ids import RunId

FOLLOW_S: Final = 60.0
"""How long word that a run is followed holds: a follower says it again at every keep-alive."""
_MOST: Final = 10_000


class FollowedRuns:
    """The runs a client follows (GET /v1/runs/{id}/events), as word of it reached this process.

    Streaming costs more than a whole answer (the provider's stream is parsed chunk by chunk, and
    each fragment is logged), so a run streams only while someone watches it: when it was created
    with `stream` (its creator follows it from the start), or while word that it is followed is
    fresh (`follow`, from this process's followers or, through the run events, another's). A run
    followed only from the middle of an LLM call streams from its next one.
    """

    def __init__(self, clock: Clock, *, hold_s: float = FOLLOW_S) -> None:
        self._clock = clock
        self._hold_s = hold_s
        self._until: dict[RunId, float] = {}

    def follow(self, run_id: RunId) -> None:
        """Someone follows the run now."""
        until = self._until
        until[run_id] = self._clock.monotonic() + self._hold_s
        if len(until) > _MOST:
            del until[next(iter(until))]

    def followed(self, run_id: RunId) -> bool:
        """Whether someone followed the run lately (a dictionary lookup: asked before every LLM call)."""
        until = self._until.get(run_id)
        if until is None:
            return False
        if until < self._clock.monotonic():
            del self._until[run_id]
            return False
        return True
