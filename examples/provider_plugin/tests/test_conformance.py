"""AgentKit's provider conformance suite, run against the Acme provider on a loopback Acme fake.

All a provider package writes: its wire format for the fake (`AcmeWire`: how an answer, an error
and a stream look in its API, and where a request carries tool results), and a target that builds
its client against the fake's URL.
"""

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentkit_acme import build_client

from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.testing.llm_conformance import (
    ConformanceTarget,
    Failure,
    FakeUsage,
    HttpTarget,
    LLMConformance,
    RecordedRequest,
    Rendered,
    Reply,
    SentResult,
    WireFormat,
    text_pieces,
)

_STOP = {"stop": "end", "tool_calls": "calls", "refusal": "refused", "length": "limit"}


class AcmeWire(WireFormat):
    """The Acme API on the wire (see `agentkit_acme.client`)."""

    def wants_stream(self, request: RecordedRequest) -> bool:
        return bool((request.body or {}).get("stream"))

    def render(self, answer: Reply | Failure, request: RecordedRequest, *, stream: bool) -> Rendered:
        if isinstance(answer, Failure):
            return Rendered(status=answer.status, headers=answer.headers, body={"error": answer.message})
        usage = answer.usage or FakeUsage()
        calls = [
            {"id": c.id, "name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)} for c in answer.calls
        ]
        stop = "calls" if calls and answer.stop != "length" else _STOP[answer.stop]
        done: dict[str, Any] = {
            "id": "acme-1",
            "model": "acme-1",
            "stop": stop,
            "refusal": answer.refusal,
            "usage": {"in": usage.input_tokens, "out": usage.output_tokens, "cached": usage.cache_read_tokens},
        }
        if not stream:
            return Rendered(body={**done, "text": answer.text, "calls": calls})
        events: list[dict[str, Any]] = [{"text": piece} for piece in text_pieces(answer.text)]
        for index, call in enumerate(calls):
            events.append({"call": {"index": index, "id": call["id"], "name": call["name"]}})
            pieces = [call["arguments"][at : at + 5] for at in range(0, len(call["arguments"]), 5)]
            events += [{"arguments": {"index": index, "piece": piece}} for piece in pieces]
        events.append({"done": done})
        return Rendered(events=[f"data: {json.dumps(event)}\n\n" for event in events])

    def tool_results(self, request: RecordedRequest) -> list[SentResult]:
        return [
            SentResult(call_id=m["call_id"], text=m["content"], is_error=m["error"])
            for m in (request.body or {}).get("messages", ())
            if m["role"] == "tool"
        ]


def build(base_url: str, timeout_s: float) -> Any:
    # through the factory the entry point names, from settings, as AgentKit builds it
    return build_client(
        load_settings({}, llm_provider="acme", llm_base_url=base_url, llm_request_timeout_s=timeout_s).llm
    )


class TestAcmeConformance(LLMConformance):
    """The Acme provider keeps the LLMClient port's promises."""

    @pytest.fixture
    async def conformance_target(self) -> AsyncIterator[ConformanceTarget]:
        target = HttpTarget("acme", AcmeWire, build)
        yield target
        await target.aclose()
