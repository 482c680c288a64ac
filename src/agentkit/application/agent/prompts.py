"""PromptLog: what each LLM call of a run sent, as a reference to messages stored once per run.

A run's conversation only grows, so every call sends a prefix of it. The log hands the recorder, for
each call, the reference (`PromptRef`: how many messages, which tool set) and what no earlier call of
the run sent (`SentPrompt`): the sinks store each message and each tool set once, so a run's storage
grows with its steps, not with the square of them.

The log only counts and keeps references: the stored form of what was sent (digests, redaction) is
made by the step pipeline's writer, in its batches, off the run's path.
"""

from collections.abc import Sequence
from typing import Any

from agentkit.application.pipeline.entries import SentPrompt
from agentkit.domain.messages import Message
from agentkit.domain.steps import PromptRef, digest_of
from agentkit.domain.tools import ToolSchema

_NO_PARAMETERS: dict[str, Any] = {}


class PromptLog:
    """One run's record of what its LLM calls sent (slotted: one per run in flight).

    `sent(messages, schemas)` returns the reference for this call and the messages and tool set
    the run had not sent before. It assumes what the loop guarantees: a run's conversation only
    grows, so the messages stored so far are a prefix of what is sent now.
    """

    __slots__ = ("_last_schemas", "_payloads", "_stored", "_tool_sets")

    def __init__(self, *, payloads: bool = True, already_stored: int = 0) -> None:
        self._payloads = payloads
        self._stored = already_stored  # messages of this run handed to the trace by earlier calls
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
    ) -> tuple[PromptRef, SentPrompt | None]:
        """The reference to what this call sends, and the part of it that is new to the run (None: nothing)."""
        stored = self._stored
        count = len(messages)
        new: tuple[Message, ...] = ()
        if count > stored:
            new = tuple(messages[stored:count])
            self._stored = count
        tools_digest = None
        tool_set = None
        if schemas:
            tools_digest = self._digest_of_schemas(schemas)
            if tools_digest not in self._tool_sets:
                self._tool_sets = (*self._tool_sets, tools_digest)
                tool_set = (tools_digest, tuple(schemas))
        ref = PromptRef(
            message_count=count,
            tools_digest=tools_digest,
            provider=provider,
            model=model,
            parameters=_NO_PARAMETERS if parameters is None else parameters,
            payloads=self._payloads,
        )
        if not new and tool_set is None:
            return ref, None
        return ref, SentPrompt(stored + 1, new, tool_set)

    def _digest_of_schemas(self, schemas: Sequence[ToolSchema]) -> str:
        last = self._last_schemas
        if last is not None and last[0] is schemas:
            return last[1]
        digest = schema_digest(schemas)
        self._last_schemas = (schemas, digest)
        return digest


# The tool sets of a process are few (an agent's registry builds its schemas once and shares them):
# their digests are taken once per set, not once per run.
_SCHEMA_DIGESTS: dict[int, tuple[Sequence[ToolSchema], str]] = {}
_MOST_SCHEMA_DIGESTS = 256


def schema_digest(schemas: Sequence[ToolSchema]) -> str:
    """The digest of a tool set, remembered for the sets the process offers again and again."""
    known = _SCHEMA_DIGESTS.get(id(schemas))
    if known is not None and known[0] is schemas:
        return known[1]
    digest = digest_of(schemas)
    if len(_SCHEMA_DIGESTS) >= _MOST_SCHEMA_DIGESTS:
        _SCHEMA_DIGESTS.pop(next(iter(_SCHEMA_DIGESTS)))
    _SCHEMA_DIGESTS[id(schemas)] = (schemas, digest)
    return digest
