"""Gemini's streamed chunks to fragments and to the response `chat` would have read.

Pure: no SDK client, no I/O. Each chunk of `streamGenerateContent` is a `GenerateContentResponse`
holding the next parts of the first candidate: text in pieces, function calls whole (Gemini does
not stream a call's arguments, so each call goes out as one fragment), thought summaries (never
shown) and thought signatures. The last chunk carries `finishReason`; every chunk carries the
usage so far (the last one's is the total), `responseId` and `modelVersion`. `ResponseAssembler`
merges the chunks into one response, the parts in the order they came, and `from_gemini_response`
reads it as it reads `chat`'s.

A safety block can come after text has gone out (`finishReason: SAFETY` on the last chunk): the
response is then a refusal without text, as `chat` gives it; the fragments already sent are not
taken back, so a consumer shows the response, not the fragments, as what the model said.
"""

import msgspec
from google.genai import types

from agentkit.adapters.llm.gemini_translate import from_gemini_response, tool_call_from
from agentkit.domain.messages import LLMDelta, LLMResponse, TextDelta, ToolCall, ToolCallDelta


class ResponseAssembler:
    """Reads one streamed answer: the fragments as they come, the whole response at the end."""

    def __init__(self) -> None:
        self._parts: list[types.Part] = []
        self._calls: list[ToolCall] = []
        self._seen_candidate = False
        self._finish_reason: types.FinishReason | None = None
        self._finish_message: str | None = None
        self._usage: types.GenerateContentResponseUsageMetadata | None = None
        self._feedback: types.GenerateContentResponsePromptFeedback | None = None
        self._response_id: str | None = None
        self._model_version: str | None = None

    @property
    def finished(self) -> bool:
        """Whether the stream said the answer ended (a finish reason, or a blocked prompt)."""
        blocked = self._feedback is not None and self._feedback.block_reason is not None
        return self._finish_reason is not None or blocked

    def feed(self, chunk: types.GenerateContentResponse) -> list[LLMDelta]:
        """The fragments one chunk carries, in order."""
        self._response_id = self._response_id or chunk.response_id
        self._model_version = self._model_version or chunk.model_version
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata
        if chunk.prompt_feedback is not None:
            self._feedback = chunk.prompt_feedback
        if not chunk.candidates:
            return []
        candidate = chunk.candidates[0]
        self._seen_candidate = True
        if candidate.finish_reason is not None:
            self._finish_reason = candidate.finish_reason
            self._finish_message = candidate.finish_message
        out: list[LLMDelta] = []
        for part in (candidate.content.parts if candidate.content else None) or ():
            self._parts.append(part)
            if part.function_call is not None:
                call = tool_call_from(part.function_call, part.thought_signature)
                arguments = msgspec.json.encode(call.arguments).decode()
                out.append(ToolCallDelta(index=len(self._calls), id=call.id, name=call.name, arguments=arguments))
                self._calls.append(call)
            elif part.text and not part.thought:
                out.append(TextDelta(text=part.text))
        return out

    def response(self) -> LLMResponse:
        """The response the streamed answer amounts to, as `chat` gives it.

        Raises:
            ProviderUnavailable: as `from_gemini_response` (no candidate, a malformed call).
        """
        candidates = None
        if self._seen_candidate:
            candidate = types.Candidate(
                content=types.Content(role="model", parts=self._parts),
                finish_reason=self._finish_reason,
                finish_message=self._finish_message,
            )
            candidates = [candidate]
        merged = types.GenerateContentResponse(
            candidates=candidates,
            usage_metadata=self._usage,
            prompt_feedback=self._feedback,
            response_id=self._response_id,
            model_version=self._model_version,
        )
        return from_gemini_response(merged, calls=self._calls)
