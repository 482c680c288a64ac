"""The fake's Gemini API: `POST .../models/{model}:generateContent`, or `:streamGenerateContent?alt=sse`."""

import json
from typing import Any

from agentkit.testing.llm_conformance.answers import Failure, FakeUsage, Reply
from agentkit.testing.llm_conformance.loopback import RecordedRequest, Rendered, SentResult, WireFormat, text_pieces

_FINISH = {"stop": "STOP", "tool_calls": "STOP", "refusal": "SAFETY", "length": "MAX_TOKENS"}
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


class GeminiWire(WireFormat):
    """generateContent as Gemini sends it: function calls whole (args an object), a refusal as `SAFETY`.

    A bad call (argument text that is no object) is Gemini's `MALFORMED_FUNCTION_CALL` finish:
    Gemini parses the model's calls itself and never sends one it could not parse.
    """

    def __init__(self, model: str = "gemini-2.5-flash") -> None:
        self.model = model

    def wants_stream(self, request: RecordedRequest) -> bool:
        """The `:streamGenerateContent` method."""
        return ":streamGenerateContent" in request.path

    def render(self, answer: Reply | Failure, request: RecordedRequest, *, stream: bool) -> Rendered:
        """A response, its chunks (one per text piece, each call whole), or an error body."""
        if isinstance(answer, Failure):
            status = _STATUS.get(answer.status, "UNAVAILABLE" if answer.status >= 500 else "FAILED_PRECONDITION")
            body = {"error": {"code": answer.status, "message": answer.message, "status": status}}
            return Rendered(status=answer.status, headers=answer.headers, body=body)
        usage = answer.usage or FakeUsage()
        metadata = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
            "cachedContentTokenCount": usage.cache_read_tokens,
        }
        finish = _FINISH[answer.stop]
        if any(call.raw_arguments is not None for call in answer.calls):
            finish, calls = "MALFORMED_FUNCTION_CALL", []
        else:
            calls = [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}} for c in answer.calls]
        texts = [] if answer.stop == "refusal" else text_pieces(answer.text)
        head = {"modelVersion": self.model, "responseId": "fake-response"}
        if not stream:
            parts = ([{"text": answer.text}] if texts else []) + calls
            return Rendered(body={**head, "candidates": [_candidate(parts, finish)], "usageMetadata": metadata})
        chunks: list[dict[str, Any]] = [{**head, "candidates": [_candidate([{"text": t}])]} for t in texts]
        chunks += [{**head, "candidates": [_candidate([call])]} for call in calls]
        chunks.append({**head, "candidates": [_candidate([], finish)], "usageMetadata": metadata})
        return Rendered(events=[f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks])

    def tool_results(self, request: RecordedRequest) -> list[SentResult]:
        """The `functionResponse` parts, by id (Gemini has no error mark: the text says it)."""
        results: list[SentResult] = []
        for content in (request.body or {}).get("contents", ()):
            for part in content.get("parts", ()):
                response = part.get("functionResponse")
                if response is not None:
                    text = (response.get("response") or {}).get("result", "")
                    results.append(SentResult(call_id=response.get("id"), text=str(text)))
        return results


def _candidate(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return candidate
