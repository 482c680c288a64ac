"""The Vercel AI SDK's UI message stream: the chunks AgentKit sends, as the SDK names their fields.

Each chunk is one SSE `data:` line of JSON, its kind in `type`; the stream ends with `data: [DONE]`.
Field names and kinds are those of the AI SDK's `uiMessageChunkSchema`
(packages/ai/src/ui-message-stream/ui-message-chunks.ts, `ai` 7.0.70 or later for `reset-step`);
AgentKit sends only the kinds below. The OpenAPI document shows them as one event's schema (what
an SSE parser reads: `event` is `message`, the default, and `data` the chunk's JSON text).
"""

from typing import Annotated, Any, Final, Literal

import msgspec

from agentkit.application.tools.schema import inline_refs

DONE: Final = "[DONE]"
"""The last `data:` of the stream."""

FinishReason = Literal["stop", "length", "content-filter", "tool-calls", "error", "other"]


class UIChunk(msgspec.Struct, kw_only=True, tag_field="type", rename="camel", omit_defaults=True, gc=False):
    """A chunk of a UI message stream."""


class StartChunk(UIChunk, tag="start"):
    """The assistant's message begins: its id is the run's, its metadata names the run and its session."""

    message_id: str
    message_metadata: dict[str, Any]


class StartStepChunk(UIChunk, tag="start-step"):
    """A step begins: one LLM call and the tool calls it asked for."""


class FinishStepChunk(UIChunk, tag="finish-step"):
    """The step ended (after the results of its tool calls)."""


class ResetStepChunk(UIChunk, tag="reset-step"):
    """Drop what this step sent so far: the run was resumed and asks its model again."""


class TextStartChunk(UIChunk, tag="text-start"):
    """A text part begins."""

    id: str


class TextDeltaChunk(UIChunk, tag="text-delta"):
    """A piece of the text part."""

    id: str
    delta: str


class TextEndChunk(UIChunk, tag="text-end"):
    """The text part is complete."""

    id: str


class ToolInputStartChunk(UIChunk, tag="tool-input-start"):
    """The model began a tool call; its arguments come as `tool-input-delta`s."""

    tool_call_id: str
    tool_name: str


class ToolInputDeltaChunk(UIChunk, tag="tool-input-delta"):
    """A piece of a call's arguments JSON (the pieces, joined, are the arguments as the model wrote them)."""

    tool_call_id: str
    input_text_delta: str


class ToolInputAvailableChunk(UIChunk, tag="tool-input-available"):
    """The call is complete: its parsed arguments."""

    tool_call_id: str
    tool_name: str
    input: dict[str, Any]


class ToolOutputAvailableChunk(UIChunk, tag="tool-output-available"):
    """The call's result (the text the model reads)."""

    tool_call_id: str
    output: str


class ToolOutputErrorChunk(UIChunk, tag="tool-output-error"):
    """The call failed (an error the model reads and may recover from)."""

    tool_call_id: str
    error_text: str


class RequiredActionChunk(UIChunk, tag="data-required-action"):
    """The run waits on its client (`requires_action`): `data` is the run's `required_action`, as GET
    /v1/runs/{id} shows it; answer through POST /v1/runs/{id}/approvals or /tool_outputs."""

    id: str
    data: dict[str, Any]


class ErrorChunk(UIChunk, tag="error"):
    """The run did not succeed: its status and reason."""

    error_text: str


class FinishChunk(UIChunk, tag="finish"):
    """The message is complete (the run ended)."""

    finish_reason: FinishReason


AnyUIChunk = (
    StartChunk
    | StartStepChunk
    | FinishStepChunk
    | ResetStepChunk
    | TextStartChunk
    | TextDeltaChunk
    | TextEndChunk
    | ToolInputStartChunk
    | ToolInputDeltaChunk
    | ToolInputAvailableChunk
    | ToolOutputAvailableChunk
    | ToolOutputErrorChunk
    | RequiredActionChunk
    | ErrorChunk
    | FinishChunk
)


def _chunk_text() -> Any:
    """A `data:` field: `[DONE]`, or the JSON text of a chunk (its schema written out)."""
    schema = inline_refs(msgspec.json.schema(AnyUIChunk))
    schema.pop("discriminator", None)  # its mapping names the `$defs` just inlined; `type` tells them apart anyway
    return Annotated[
        str,
        msgspec.Meta(
            description="A chunk as one line of JSON text (its kind in `type`), or `[DONE]` at the end.",
            # `[DONE]` first: it is not JSON, and anyOf stops at the first branch that fits
            extra_json_schema={
                "extra": {"anyOf": [{"const": DONE}, {"contentMediaType": "application/json", "contentSchema": schema}]}
            },
        ),
    ]


class UIChunkEventDoc(msgspec.Struct, kw_only=True, tag_field="event", tag="message"):
    """A chunk of the Vercel AI SDK's UI message stream (`format=vercel`): a `data:` line without an
    event name (so `message`) or an id."""

    data: _chunk_text()  # type: ignore[valid-type]
