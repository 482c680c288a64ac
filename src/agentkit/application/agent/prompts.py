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
# a system message no call sends: what a resumed run's log compares the first system prompt with
_UNKNOWN_SYSTEM = Message(role="system", content="")


class PromptLog:
    """One run's record of what its LLM calls sent (slotted: one per run in flight).

    `sent(messages, schemas)` returns the reference for this call and the messages and tool set
    the run had not sent before. It assumes what the loop guarantees: a run's conversation only
    grows, so the messages stored so far are a prefix of what is sent now.
    """

    __slots__ = ("_last_schemas", "_payloads", "_stored", "_system", "_system_seq", "_tool_sets")

    def __init__(self, *, payloads: bool = True, already_stored: int = 0) -> None:
        self._payloads = payloads
        self._stored = already_stored  # messages of this run handed to the trace by earlier calls
        # the system message the last call sent (compared by identity: only a handoff replaces it), and
        # the seq it is stored under when that is not the conversation's message 1
        self._system: Message | None = None
        self._system_seq: int | None = None
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
        step_no: int = 0,
    ) -> tuple[PromptRef, SentPrompt | None]:
        """The reference to what this call sends, and the part of it that is new to the run (None: nothing).

        `step_no` is the number of the call's step: a system prompt a handoff put in place of message 1
        is stored once, under `-step_no`, and the calls that send it refer to it.
        """
        stored = self._stored
        count = len(messages)
        new: tuple[Message, ...] = ()
        system: tuple[int, Message] | None = None
        if count and messages[0] is not self._system:
            system = self._system_changed(messages[0], step_no=step_no)
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
            system_seq=self._system_seq,
        )
        if not new and tool_set is None and system is None:
            return ref, None
        return ref, SentPrompt(stored + 1, new, tool_set, system)

    def handed_off(self) -> None:
        """The run was handed to another agent before this log was made (a resumed run): its stored
        message 1 may be an earlier agent's, so the next call stores the system prompt it sends apart."""
        self._system = _UNKNOWN_SYSTEM

    def _system_changed(self, system: Message, *, step_no: int) -> tuple[int, Message] | None:
        """The system prompt to store apart, when this call's differs from what message 1 (or the last
        handoff's) holds; None when it is the same (or is message 1 itself, about to be stored)."""
        known = self._system
        self._system = system
        if known is None or (known is not _UNKNOWN_SYSTEM and known == system):
            return None
        self._system_seq = -step_no
        return self._system_seq, system

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
