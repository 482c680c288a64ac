"""The LLM provider conformance suite, for AgentKit's providers and for a provider package's own tests.

- `LLMConformance`: the tests; subclass it with a `conformance_target` fixture;
- `HttpTarget`, `ScriptedTarget`: what the tests run against;
- `LoopbackLLMServer` and the wire formats (`OpenAIWire`, `GeminiWire`, `AnthropicWire`): a fake
  provider on 127.0.0.1 answering `Reply`, `Failure` and `Hang` in a provider's format. A package
  with its own wire format implements `WireFormat`.

docs/providers.md ("Testing a provider") shows a whole example.
"""

from agentkit.testing.llm_conformance.answers import Answer, Failure, FakeCall, FakeUsage, Hang, Reply
from agentkit.testing.llm_conformance.loopback import (
    LoopbackLLMServer,
    RecordedRequest,
    Rendered,
    SentResult,
    WireFormat,
    text_pieces,
)
from agentkit.testing.llm_conformance.suite import LLMConformance, ask
from agentkit.testing.llm_conformance.targets import ClientBuilder, ConformanceTarget, HttpTarget, ScriptedTarget
from agentkit.testing.llm_conformance.wire_anthropic import AnthropicWire
from agentkit.testing.llm_conformance.wire_gemini import GeminiWire
from agentkit.testing.llm_conformance.wire_openai import OpenAIWire

__all__ = [
    "Answer",
    "AnthropicWire",
    "ClientBuilder",
    "ConformanceTarget",
    "Failure",
    "FakeCall",
    "FakeUsage",
    "GeminiWire",
    "Hang",
    "HttpTarget",
    "LLMConformance",
    "LoopbackLLMServer",
    "OpenAIWire",
    "RecordedRequest",
    "Rendered",
    "Reply",
    "ScriptedTarget",
    "SentResult",
    "WireFormat",
    "ask",
    "text_pieces",
]
