"""PromptPolicy: what the trace may keep of prompts, steps and tool sets; digests of what was sent.

What is stored follows the policy: payloads can be left out (only roles, names and digests kept),
named fields redacted, and the values of secrets (provider keys, API keys, passwords) are never
stored, wherever they appear. The step pipeline's writer applies it to every step and message in
its batches, before any consumer sees them.
"""

import re
from typing import Any, Final

import msgspec

REDACTED: Final = "[redacted]"
_MIN_SECRET_CHARS: Final = 6  # shorter values would redact ordinary words
_MOST_SEARCHES: Final = 16  # markers looked for one by one; more share one regular expression


class PromptPolicy:
    """What of a prompt may be stored.

    Attributes:
        capture: Record what each LLM call sent at all (off: LLM steps carry no prompt reference;
            for callers that keep no trace of prompts, such as a benchmark's baseline).
        payloads: Store message content and tool-call arguments (TRACE_PAYLOADS); off keeps roles,
            tool names, ids and digests only.
        redact_fields: Keys whose values are replaced by `[redacted]` wherever they appear in
            tool-call arguments (TRACE_REDACT_FIELDS), in prompts and tool steps alike.
        secrets: Values that are never stored: replaced by `[redacted]` in any text (the
            composition root passes the configured keys and passwords; values shorter than six
            characters would redact ordinary words and are ignored).
        changes_anything: Whether storing a message may differ from sending it.
    """

    __slots__ = ("_markers", "_pattern", "capture", "changes_anything", "payloads", "redact_fields", "secrets")

    def __init__(
        self,
        *,
        capture: bool = True,
        payloads: bool = True,
        redact_fields: frozenset[str] = frozenset(),
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.capture = capture
        self.payloads = payloads
        self.redact_fields = frozenset(redact_fields)
        self.secrets = tuple(secret for secret in secrets if len(secret) >= _MIN_SECRET_CHARS)
        # what a value's JSON contains when it may need scrubbing: most do not, and are stored as sent
        markers = [msgspec.json.encode(secret)[1:-1] for secret in self.secrets]
        markers += [msgspec.json.encode(field) for field in self.redact_fields]
        self._markers = tuple(markers)
        # a few markers are looked for one by one (a substring search, several times faster than
        # re's alternation over a long prompt); many, with one regular expression
        self._pattern = (
            re.compile(b"|".join(re.escape(marker) for marker in markers)) if len(markers) > _MOST_SEARCHES else None
        )
        # whether storing a message may differ from sending it (else every step is stored as it came)
        self.changes_anything = not payloads or bool(markers)

    def scrub_text(self, text: str) -> str:
        """The text with every secret value replaced."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def scrub_value(self, value: Any) -> Any:
        """A JSON-like value with redacted fields and secrets replaced, recursively."""
        if isinstance(value, str):
            return self.scrub_text(value)
        if isinstance(value, dict):
            return {
                key: REDACTED if key in self.redact_fields else self.scrub_value(item) for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.scrub_value(item) for item in value]
        return value

    def may_hide(self, encoded: bytes) -> bool:
        """Whether a value whose JSON is `encoded` holds a secret or a redacted field (else it is stored as is)."""
        if self._pattern is not None:
            return self._pattern.search(encoded) is not None
        for marker in self._markers:  # noqa: SIM110 - a loop is quicker than any() over a generator
            if marker in encoded:
                return True
        return False


encode_sorted: Final = msgspec.json.Encoder(order="sorted").encode
"""A value's canonical JSON (keys sorted), as digests are taken of it: one encoder, not one per call."""
