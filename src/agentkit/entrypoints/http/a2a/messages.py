"""What a client's A2A message asks: a goal (its text parts), or answers to the calls a task waits on (a data part).

The documented form of an answer (see `tasks.ANSWER_HOW`): a message naming the task (`taskId`), with a
data part `{"answers": [...]}`, each answer one of

    {"call_id": "...", "decision": "approve", "digest": "..."}
    {"call_id": "...", "decision": "reject", "digest": "...", "reason": "..."}
    {"call_id": "...", "output": <any JSON value>}          (a client tool's output)

`digest` is the one the task's status message lists for the call: an approval approves exactly that call.
"""

from typing import Any, Literal

import msgspec
from a2a.types.a2a_pb2 import Message
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from agentkit.domain.actions import Decision


class CallAnswerIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One answer of a client's message."""

    call_id: str
    decision: Literal["approve", "reject"] | None = None
    digest: str | None = None
    reason: str | None = None
    output: Any = msgspec.UNSET

    @property
    def decided(self) -> Decision:
        """Approve, reject, or a client tool's output."""
        if self.decision is not None:
            return Decision(self.decision)
        return Decision.OUTPUT

    @property
    def output_text(self) -> str | None:
        """The output as the model reads it: a string as it is, any other value as JSON text."""
        if self.output is msgspec.UNSET:
            return None
        if isinstance(self.output, str):
            return self.output
        return msgspec.json.encode(self.output).decode()


class AnswersIn(msgspec.Struct, frozen=True, kw_only=True):
    """A data part with answers (other keys of the part are left alone)."""

    answers: list[CallAnswerIn]


def goal_of(message: Message) -> str:
    """The message's text parts, joined by newlines."""
    return "\n".join(part.text for part in message.parts if part.WhichOneof("content") == "text")


def answers_of(message: Message) -> list[CallAnswerIn]:
    """The answers the message's data parts give (none: an empty list).

    Raises:
        InvalidParamsError: a data part has `answers` that do not follow the documented form.
    """
    found: list[CallAnswerIn] = []
    for part in message.parts:
        if part.WhichOneof("content") != "data":
            continue
        data = MessageToDict(part.data)
        if not isinstance(data, dict) or "answers" not in data:
            continue
        try:
            given = msgspec.convert(data, AnswersIn)
        except msgspec.ValidationError as exc:
            raise InvalidParamsError(message=f"answers: {exc}") from None
        for answer in given.answers:
            if (answer.decision is None) == (answer.output is msgspec.UNSET):
                raise InvalidParamsError(
                    message=f"answers: call {answer.call_id!r} needs either a decision or an output"
                )
        found.extend(given.answers)
    return found
