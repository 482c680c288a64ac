"""FragmentGuard: a streamed step's fragments under the same PromptPolicy as the step that will hold them.

The stored step is redacted whole (`stored.stored_step`); its fragments go out before it exists, so
each rule has its fragment form:
- without payloads (TRACE_PAYLOADS=false) no fragment carries content: followers get the steps only;
- with redacted fields, a call's argument pieces cannot be redacted by key until the call is whole:
  they are not sent (the step brings the arguments, redacted);
- a secret may arrive cut across fragments: the text of a part is scrubbed as a whole, and an end
  that is the beginning of a secret (and any whole secret reaching into it) is held back until more
  comes and tells; once the step is logged what was held is dropped, for the step has it all.
"""

from typing import Final

from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.domain.ids import RunId

_MOST_HELD: Final = 10_000  # parts whose held-back end is remembered; past it the oldest are dropped


class FragmentGuard:
    """What of each joined fragment may go out now, under the policy (one per pipeline)."""

    def __init__(self, policy: PromptPolicy) -> None:
        self._policy = policy
        self._secrets = policy.secrets
        # what was held back of each part, by (run, step, kind, index)
        self._held: dict[tuple[RunId, int, str, int], str] = {}

    @property
    def passes_all(self) -> bool:
        """Whether every fragment goes out as it came (no payload rule, field or secret applies)."""
        return not self._policy.changes_anything

    def admit(self, run_id: RunId, delta: DeltaEvent) -> DeltaEvent | None:
        """The fragment as it may go out now (None: nothing of it yet, or nothing of it at all)."""
        if delta.kind == "retry":
            self._forget(run_id, delta.step_no)  # what was held of the earlier attempt is void
            return delta
        policy = self._policy
        if not policy.payloads or (delta.kind == "tool_call" and policy.redact_fields):
            return None
        if not self._secrets:
            return delta
        key = (run_id, delta.step_no, delta.kind, delta.index)
        text = self._held.pop(key, "") + delta.text
        cut = self._cut(text)
        if cut < len(text):
            self._held[key] = text[cut:]
            if len(self._held) > _MOST_HELD:
                del self._held[next(iter(self._held))]
        if cut == 0 and delta.call_id is None:
            return None
        return DeltaEvent(
            step_no=delta.step_no,
            kind=delta.kind,
            index=delta.index,
            text=policy.scrub_text(text[:cut]),
            call_id=delta.call_id,
            name=delta.name,
        )

    def step_logged(self, run_id: RunId, step_no: int) -> None:
        """The step is logged whole: what was held of its fragments is dropped."""
        if self._held:
            self._forget(run_id, step_no)

    def _cut(self, text: str) -> int:
        """Where the part of `text` that may go out now ends: before an end that begins a secret, and
        before any whole secret that reaches past that point (a secret is never cut in two)."""
        cut = len(text)
        for secret in self._secrets:
            for length in range(min(len(secret) - 1, len(text)), 0, -1):
                if text.endswith(secret[:length]):
                    cut = min(cut, len(text) - length)
                    break
        moved = True
        while moved:  # a whole secret across the cut is held whole (and the cut checked again)
            moved = False
            for secret in self._secrets:
                start = text.find(secret, max(cut - len(secret) + 1, 0))
                if start != -1 and start < cut:
                    cut, moved = start, True
        return cut

    def _forget(self, run_id: RunId, step_no: int) -> None:
        for key in [key for key in self._held if key[0] == run_id and key[1] == step_no]:
            del self._held[key]
