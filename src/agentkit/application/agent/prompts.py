"""PromptLog: what each LLM call of a run sent, as a reference to messages stored once per run.

A run's conversation only grows, so every call sends a prefix of it. The log hands the recorder, for
each call, the reference (`PromptRef`: how many messages, which tool set) and what no earlier call of
the run sent (`PromptDelta`): the sinks store each message and each tool set once, so a run's
storage grows with its steps, not with the square of them.

What is stored follows the `PromptPolicy`: payloads can be left out (only roles, names and digests
kept), named fields redacted, and the values of secrets (provider keys, API keys, passwords) are
never stored, wherever they appear.
"""

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from agentkit.domain.messages import Message, ToolCall
from agentkit.domain.steps import LLMStep, PromptDelta, PromptRef, Step, StoredMessage, ToolSet
from agentkit.domain.tools import ToolSchema

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
    """

    __slots__ = ("_markers", "_pattern", "capture", "payloads", "redact_fields", "secrets")

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

    @property
    def changes_anything(self) -> bool:
        """Whether storing a message may differ from sending it."""
        return not self.payloads or bool(self._markers)


_sha256: Final = hashlib.sha256
# canonical JSON (keys sorted), as digests are taken of it: one encoder, not one per call
_encode_sorted: Final = msgspec.json.Encoder(order="sorted").encode


def digest_of(value: Any) -> str:
    """SHA-256 (hex) of a value's canonical JSON."""
    return _sha256(_encode_sorted(value)).hexdigest()


class PromptLog:
    """One run's record of what its LLM calls sent (slotted: one per run in flight).

    `sent(messages, schemas)` returns the reference for this call and the messages and tool set
    the run had not sent before. It assumes what the loop guarantees: a run's conversation only
    grows, so the messages stored so far are a prefix of what is sent now.
    """

    __slots__ = ("_last_schemas", "_policy", "_stored", "_tool_sets")

    def __init__(self, policy: PromptPolicy, *, already_stored: int = 0) -> None:
        self._policy = policy
        self._stored = already_stored  # messages of this run stored by earlier calls
        # the digests of the tool sets stored so far: a run has one or two, so a tuple (the empty one
        # is shared) is smaller than a set (216 B a run)
        self._tool_sets: tuple[str, ...] = ()
        # a run offers the same schemas object on every call: digested once
        self._last_schemas: tuple[Sequence[ToolSchema], str] | None = None

    def sent(
        self,
        messages: Sequence[Message],
        schemas: Sequence[ToolSchema],
        *,
        provider: str = "",
        model: str = "",
        parameters: dict[str, Any] | None = None,
    ) -> tuple[PromptRef, PromptDelta]:
        """The reference to what this call sends, and the part of it that is new to the run."""
        stored = self._stored
        count = len(messages)
        new: tuple[StoredMessage, ...] = ()
        if count > stored:
            new = tuple(self._stored_message(seq, messages[seq - 1]) for seq in range(stored + 1, count + 1))
            self._stored = count
        tools_digest = None
        tool_set = None
        if schemas:
            tools_digest = self._digest_of_schemas(schemas)
            if tools_digest not in self._tool_sets:
                self._tool_sets = (*self._tool_sets, tools_digest)
                tool_set = ToolSet(digest=tools_digest, schemas=tuple(self._stored_schema(s) for s in schemas))
        ref = PromptRef(
            message_count=count,
            tools_digest=tools_digest,
            provider=provider,
            model=model,
            parameters=dict(parameters) if parameters else {},
            payloads=self._policy.payloads,
        )
        return ref, PromptDelta(messages=new, tool_set=tool_set)

    def _digest_of_schemas(self, schemas: Sequence[ToolSchema]) -> str:
        last = self._last_schemas
        if last is not None and last[0] is schemas:
            return last[1]
        digest = digest_of(schemas)
        self._last_schemas = (schemas, digest)
        return digest

    def _stored_message(self, seq: int, message: Message) -> StoredMessage:
        encoded = _encode_sorted(message)
        policy = self._policy
        if not policy.payloads or policy.may_hide(encoded):
            return StoredMessage(seq=seq, message=_stored_form(message, policy), digest=_sha256(encoded).hexdigest())
        return StoredMessage(seq=seq, message=message, digest=_sha256(encoded).hexdigest())

    def _stored_schema(self, schema: ToolSchema) -> ToolSchema:
        if not self._policy.may_hide(msgspec.json.encode(schema)):
            return schema
        return ToolSchema(
            name=schema.name,
            description=self._policy.scrub_text(schema.description),
            parameters=self._policy.scrub_value(schema.parameters),
        )


def _stored_form(message: Message, policy: PromptPolicy) -> Message:
    """The message as it may be stored: without payloads, or with fields and secrets redacted."""
    if not policy.payloads:
        calls = tuple(ToolCall(id=call.id, name=call.name) for call in message.tool_calls)
        return Message(role=message.role, tool_calls=calls, tool_call_id=message.tool_call_id, name=message.name)
    calls = tuple(
        msgspec.structs.replace(call, arguments=policy.scrub_value(call.arguments)) for call in message.tool_calls
    )
    return msgspec.structs.replace(message, content=policy.scrub_text(message.content), tool_calls=calls)


def redact_arguments(arguments: dict[str, Any], policy: PromptPolicy) -> dict[str, Any]:
    """Tool-call arguments as they may be stored."""
    if not policy.payloads:
        return {}
    if not arguments or not policy.may_hide(msgspec.json.encode(arguments)):
        return arguments
    scrubbed: dict[str, Any] = policy.scrub_value(arguments)
    return scrubbed


def stored_step(step: Step, policy: PromptPolicy) -> Step:
    """A step as the trace may keep it: what the model wrote and the tools answered, under the policy.

    Without payloads the text, arguments and outputs go (names, ids, tokens, latency and errors
    stay); otherwise named fields and secrets are redacted wherever they appear. A step holding
    neither (the common case, checked on its JSON at once) is kept as it is.
    """
    if isinstance(step, LLMStep):
        if policy.payloads and not policy.may_hide(msgspec.json.encode((step.text, step.tool_calls))):
            return step
        calls = tuple(
            msgspec.structs.replace(call, arguments=redact_arguments(call.arguments, policy))
            for call in step.tool_calls
        )
        text = policy.scrub_text(step.text) if policy.payloads else ""
        hidden = msgspec.structs.replace(step, text=text, tool_calls=calls)
        return msgspec.structs.replace(hidden, redacted=hidden != step)
    result = step.result
    if policy.payloads and not policy.may_hide(msgspec.json.encode((step.arguments, result))):
        return step
    output = policy.scrub_text(result.output) if policy.payloads else ""
    error = None if result.error is None else policy.scrub_text(result.error)
    value = policy.scrub_value(result.value) if policy.payloads else None
    result = msgspec.structs.replace(result, output=output, error=error, value=value)
    kept = msgspec.structs.replace(step, arguments=redact_arguments(step.arguments, policy), result=result)
    return msgspec.structs.replace(kept, redacted=kept != step)
