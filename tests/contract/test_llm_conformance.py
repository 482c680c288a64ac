"""The provider conformance suite (`agentkit.testing.llm_conformance`) for every built-in provider.

Each SDK-backed adapter (Azure OpenAI's deployment API among them) is built from settings as the
composition root builds it, pointed by LLM_BASE_URL at a loopback fake speaking its provider's wire
format; the scripted client plays the same answers. The plug-in example runs the same suite in its own test module
(`tests/contract/test_plugin_example_conformance.py`), as a provider package would.
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit.adapters.llm.anthropic_client import AnthropicLLMClient
from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.gemini_client import GeminiLLMClient
from agentkit.adapters.llm.openai_client import OpenAILLMClient
from agentkit.application.ports.llm_client import LLMClient
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.testing.llm_conformance import (
    AnthropicWire,
    ConformanceTarget,
    GeminiWire,
    HttpTarget,
    LLMConformance,
    OpenAIWire,
    ScriptedTarget,
)


def _settings(provider: str, base_url: str, timeout_s: float, **extra: Any) -> LLMConfig:
    return load_settings({}, llm_provider=provider, llm_base_url=base_url, llm_request_timeout_s=timeout_s, **extra).llm


def _openai(base_url: str, timeout_s: float) -> LLMClient:
    # the model named, so the fake at LLM_BASE_URL is priced as OpenAI's model would be (genai-prices)
    config = _settings("openai", f"{base_url}/v1", timeout_s, openai_api_key="test-key", llm_model="gpt-4.1-mini")
    return OpenAILLMClient.from_config(config)


def _azure_openai(base_url: str, timeout_s: float) -> LLMClient:
    # the classic deployment API: the endpoint, the deployment as the model, an api-version
    config = _settings(
        "azure_openai",
        base_url,
        timeout_s,
        azure_openai_api_key="test-key",
        azure_openai_api_version="2024-10-21",
        llm_model="gpt-4.1-mini",
    )
    return OpenAILLMClient.from_azure_config(config)


def _gemini(base_url: str, timeout_s: float) -> LLMClient:
    config = _settings("gemini", base_url, timeout_s, gemini_api_key="test-key", llm_model="gemini-2.5-flash")
    return GeminiLLMClient.from_config(config)


def _anthropic(base_url: str, timeout_s: float) -> LLMClient:
    config = _settings("anthropic", base_url, timeout_s, anthropic_api_key="test-key", llm_model="claude-sonnet-5-5")
    return AnthropicLLMClient.from_config(config)


def _target(name: str) -> ConformanceTarget:
    if name == "openai":
        return HttpTarget("openai", OpenAIWire, _openai, priced=True)
    if name == "azure_openai":
        return HttpTarget("azure_openai", OpenAIWire, _azure_openai, priced=True)
    if name == "gemini":
        return HttpTarget("gemini", GeminiWire, _gemini, priced=True, bad_calls_are_unavailable=True)
    if name == "anthropic":
        return HttpTarget("anthropic", AnthropicWire, _anthropic, priced=True)
    return ScriptedTarget()


class TestBuiltinProviders(LLMConformance):
    """Every built-in provider keeps the port's promises."""

    @pytest.fixture(params=["openai", "azure_openai", "gemini", "anthropic", "scripted"])
    async def conformance_target(self, request: pytest.FixtureRequest) -> AsyncIterator[ConformanceTarget]:
        target = _target(request.param)
        yield target
        await target.aclose()
