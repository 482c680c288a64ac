"""AcmeLLMClient: the Acme completion API behind AgentKit's LLMClient port, on httpx.

The Acme API (made up for this example): `POST {base}/v1/complete` with `{model, messages, tools,
max_tokens, stream}`; a message is `{role, content}`, an assistant's also `calls: [{id, name,
arguments}]`, a tool result `{role: "tool", call_id, content, error}`. It answers
`{id, model, text, calls, stop, refusal, usage: {in, out, cached}}`, `stop` being `end`, `calls`,
`refused` or `limit`; an error is `{"error": message}` with its status (and `retry-after`).
Streamed, it sends `{"text": piece}`, `{"call": {index, id, name}}`, `{"arguments": {index, piece}}`
events and a last `{"done": <the answer without text and calls>}`.
"""

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

from agentkit.adapters.llm.errors import ProviderUnavailable, retry_after_s
from agentkit.application.errors import LLMError, LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import (
    FinishReason,
    LLMDelta,
    LLMResponse,
    Message,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.domain.tools import ToolSchema

_FINISH = {
    "end": FinishReason.STOP,
    "calls": FinishReason.TOOL_CALLS,
    "refused": FinishReason.REFUSED,
    "limit": FinishReason.LENGTH,
}


class AcmeLLMClient(LLMClient):
    """One request per call; the port's errors; no retries (AgentKit's policy retries)."""

    def __init__(self, *, base_url: str, model: str, max_tokens: int | None = None, timeout_s: float = 60.0) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout_s)
        self._model = model
        self._max_tokens = max_tokens

    @property
    def provider(self) -> str:
        """`acme`."""
        return "acme"

    @property
    def model(self) -> str:
        """The model every request names."""
        return self._model

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """One completion, read whole."""
        try:
            response = await self._http.post("/v1/complete", json=self._body(messages, tools, stream=False))
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        if response.status_code != 200:
            raise _status_error(response.status_code, response.headers, response.text)
        return _response(response.json())

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """One completion, streamed: text and argument pieces as they come, then the whole response."""
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        done: dict[str, Any] | None = None
        request = self._http.build_request("POST", "/v1/complete", json=self._body(messages, tools, stream=True))
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        try:
            if response.status_code != 200:
                raise _status_error(response.status_code, response.headers, (await response.aread()).decode())
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if "text" in event:
                    text.append(event["text"])
                    yield TextDelta(text=event["text"])
                elif "call" in event:
                    call = event["call"]
                    calls[call["index"]] = {"id": call["id"], "name": call["name"], "arguments": ""}
                    yield ToolCallDelta(index=call["index"], id=ToolCallId(call["id"]), name=call["name"])
                elif "arguments" in event:
                    piece = event["arguments"]
                    calls[piece["index"]]["arguments"] += piece["piece"]
                    yield ToolCallDelta(index=piece["index"], arguments=piece["piece"])
                elif "done" in event:
                    done = event["done"]
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from exc
        finally:
            await response.aclose()
        if done is None:
            raise ProviderUnavailable("acme's stream ended before the answer did")
        yield _response({**done, "text": "".join(text), "calls": [calls[i] for i in sorted(calls)]})

    def _body(self, messages: Sequence[Message], tools: Sequence[ToolSchema], *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [_message(message) for message in messages],
            "tools": [{"name": t.name, "description": t.description, "schema": t.parameters} for t in tools],
            "stream": stream,
        }
        if self._max_tokens is not None:
            body["max_tokens"] = self._max_tokens
        return body

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "call_id": message.tool_call_id, "content": message.content, "error": message.is_error}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["calls"] = [{"id": c.id, "name": c.name, "arguments": json.dumps(c.arguments)} for c in message.tool_calls]
    return out


def _response(body: dict[str, Any]) -> LLMResponse:
    calls = tuple(_call(call) for call in body.get("calls") or ())
    finish = _FINISH.get(body.get("stop", ""), FinishReason.OTHER)
    usage = body.get("usage") or {}
    return LLMResponse(
        text="" if finish is FinishReason.REFUSED else body.get("text") or "",
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.get("in", 0), output_tokens=usage.get("out", 0), cache_read_tokens=usage.get("cached", 0)
        ),
        finish_reason=FinishReason.TOOL_CALLS if calls and finish is not FinishReason.LENGTH else finish,
        refusal=(body.get("refusal") or "acme refused") if finish is FinishReason.REFUSED else None,
        response_id=body.get("id"),
        response_model=body.get("model"),
    )


def _call(call: dict[str, Any]) -> ToolCall:
    # arguments that are no JSON object are not an exception: the call carries what was wrong
    try:
        arguments = json.loads(call["arguments"] or "{}")
    except json.JSONDecodeError as exc:
        return ToolCall(id=ToolCallId(call["id"]), name=call["name"], arguments_error=f"not JSON: {exc.msg}")
    if not isinstance(arguments, dict):
        return ToolCall(id=ToolCallId(call["id"]), name=call["name"], arguments_error="not a JSON object")
    return ToolCall(id=ToolCallId(call["id"]), name=call["name"], arguments=arguments)


def _transport_error(exc: httpx.HTTPError) -> LLMError:
    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailable("acme did not answer in time")
    return ProviderUnavailable(f"could not reach acme: {type(exc).__name__}: {exc}")


def _status_error(status: int, headers: httpx.Headers, text: str) -> LLMError:
    try:
        detail = str(json.loads(text).get("error", text))
    except (json.JSONDecodeError, AttributeError):
        detail = text[:300]
    if status in (408, 409, 429) or status >= 500:
        return ProviderUnavailable(
            f"acme answered HTTP {status}: {detail}", retry_after_s=retry_after_s(headers), status=status
        )
    return LLMRequestError(f"acme rejected the request (HTTP {status}): {detail}")
