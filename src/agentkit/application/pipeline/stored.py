"""What the trace may keep: steps, messages and tool sets in their stored form under the PromptPolicy.

The step pipeline's writer calls these on its batches, so the run's own task never encodes,
digests or scrubs what it records.
"""

import hashlib
from typing import Any, Final

import msgspec

from agentkit.application.pipeline.entries import SentPrompt
from agentkit.application.pipeline.policy import PromptPolicy, encode_sorted
from agentkit.domain.messages import Message, ToolCall
from agentkit.domain.steps import LLMStep, PromptDelta, Step, StoredMessage, ToolSet
from agentkit.domain.tools import ToolSchema

_sha256: Final = hashlib.sha256
_encode: Final = msgspec.json.Encoder().encode


def stored_delta(sent: SentPrompt, policy: PromptPolicy) -> PromptDelta:
    """The messages and tool set an LLM call sent first, as the trace stores them (each with its digest)."""
    first = sent.first_seq
    if policy.changes_anything:
        messages = tuple([stored_message(seq, message, policy) for seq, message in enumerate(sent.messages, first)])
    else:  # every message is stored as it was sent
        messages = tuple([StoredMessage(seq=seq, message=message) for seq, message in enumerate(sent.messages, first)])
    if sent.system is not None:  # a handoff's system prompt, stored apart from the conversation's positions
        messages = (*messages, stored_message(*sent.system, policy))
    tool_set = None
    if sent.tools is not None:
        digest, schemas = sent.tools
        tool_set = ToolSet(digest=digest, schemas=tuple(_stored_schema(schema, policy) for schema in schemas))
    return PromptDelta(messages=messages, tool_set=tool_set)


def stored_message(seq: int, message: Message, policy: PromptPolicy) -> StoredMessage:
    """One message as stored: its content as the policy allows; its digest (of the message as sent) is
    taken now when the stored form differs, else when someone asks for it."""
    if not policy.changes_anything:
        return StoredMessage(seq=seq, message=message)
    encoded = encode_sorted(message)
    if not policy.payloads or policy.may_hide(encoded):
        return StoredMessage(seq=seq, message=_stored_form(message, policy), sent_digest=_sha256(encoded).hexdigest())
    return StoredMessage(seq=seq, message=message)


def _stored_schema(schema: ToolSchema, policy: PromptPolicy) -> ToolSchema:
    if not policy.changes_anything or not policy.may_hide(_encode(schema)):
        return schema
    return ToolSchema(
        name=schema.name,
        description=policy.scrub_text(schema.description),
        parameters=policy.scrub_value(schema.parameters),
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
    if not arguments or not policy.may_hide(_encode(arguments)):
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
        if policy.payloads and not policy.may_hide(_encode((step.text, step.tool_calls))):
            return step
        calls = tuple(
            msgspec.structs.replace(call, arguments=redact_arguments(call.arguments, policy))
            for call in step.tool_calls
        )
        text = policy.scrub_text(step.text) if policy.payloads else ""
        hidden = msgspec.structs.replace(step, text=text, tool_calls=calls)
        return msgspec.structs.replace(hidden, redacted=hidden != step)
    result = step.result
    if policy.payloads and not policy.may_hide(_encode((step.arguments, result))):
        return step
    output = policy.scrub_text(result.output) if policy.payloads else ""
    error = None if result.error is None else policy.scrub_text(result.error)
    value = policy.scrub_value(result.value) if policy.payloads else None
    result = msgspec.structs.replace(result, output=output, error=error, value=value)
    kept = msgspec.structs.replace(step, arguments=redact_arguments(step.arguments, policy), result=result)
    return msgspec.structs.replace(kept, redacted=kept != step)
