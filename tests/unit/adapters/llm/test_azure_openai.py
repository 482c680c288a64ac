"""Azure OpenAI both ways, against a loopback Chat Completions fake: what reaches the server.

- the v1 API: LLM_PROVIDER=openai with LLM_BASE_URL=https://<resource>.openai.azure.com/openai/v1,
  the deployment as LLM_MODEL, a key or an Entra ID token (LLM_TOKEN_PROVIDER) as the bearer token;
- the classic deployment API: LLM_PROVIDER=azure_openai, the endpoint as LLM_BASE_URL,
  AZURE_OPENAI_API_VERSION, the key as `api-key` or the token as a bearer token.
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit.adapters.llm.factory import build_llm_client
from agentkit.application.errors import ConfigurationError, LLMRequestError
from agentkit.domain.messages import Message
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.testing.llm_conformance import Failure, LoopbackLLMServer, OpenAIWire, Reply

CONVERSATION = [Message(role="user", content="Hello")]
TOKENS_ISSUED: list[str] = []


def entra_token() -> str:
    """A stand-in for azure-identity's bearer token provider (LLM_TOKEN_PROVIDER names it)."""
    TOKENS_ISSUED.append(f"entra-token-{len(TOKENS_ISSUED) + 1}")
    return TOKENS_ISSUED[-1]


async def async_entra_token() -> str:
    """The same, as an async callable (azure.identity.aio's provider is one)."""
    return "entra-async-token"


@pytest.fixture
async def fake() -> AsyncIterator[LoopbackLLMServer]:
    async with LoopbackLLMServer(OpenAIWire(), [Reply(text="Hi.")]) as server:
        yield server


async def ask(**settings: Any) -> None:
    client = build_llm_client(load_settings({}, **settings).llm)
    try:
        response = await client.chat(CONVERSATION, [])
    finally:
        await client.aclose()
    assert response.text == "Hi."


async def test_the_v1_api_is_the_openai_provider_at_the_resource_url_with_its_key(fake: LoopbackLLMServer) -> None:
    await ask(
        llm_provider="openai",
        llm_base_url=f"{fake.base_url}/openai/v1",
        openai_api_key="azure-key-0123456789",
        llm_model="my-gpt-deployment",
    )
    (request,) = fake.requests
    assert request.path == "/openai/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer azure-key-0123456789"
    assert request.body["model"] == "my-gpt-deployment"


@pytest.mark.parametrize(
    ("provider", "token"),
    [("entra_token", "entra-token-"), ("async_entra_token", "entra-async-token")],
)
async def test_the_v1_api_takes_an_entra_token_instead_of_a_key(
    fake: LoopbackLLMServer, provider: str, token: str
) -> None:
    await ask(
        llm_provider="openai",
        llm_base_url=f"{fake.base_url}/openai/v1",
        llm_token_provider=f"{__name__}:{provider}",
        llm_model="my-gpt-deployment",
    )
    assert fake.requests[0].headers["authorization"].startswith(f"Bearer {token}")


async def test_the_deployment_api_sends_the_api_version_and_the_key_as_api_key(fake: LoopbackLLMServer) -> None:
    await ask(
        llm_provider="azure_openai",
        llm_base_url=fake.base_url,
        azure_openai_api_key="azure-key-0123456789",
        azure_openai_api_version="2024-10-21",
        llm_model="my-gpt-deployment",
    )
    (request,) = fake.requests
    assert request.path == "/openai/deployments/my-gpt-deployment/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-key-0123456789"
    assert "authorization" not in request.headers


async def test_the_deployment_api_takes_an_entra_token(fake: LoopbackLLMServer) -> None:
    await ask(
        llm_provider="azure_openai",
        llm_base_url=fake.base_url,
        llm_token_provider=f"{__name__}:entra_token",
        azure_openai_api_version="2024-10-21",
        llm_model="my-gpt-deployment",
    )
    (request,) = fake.requests
    assert request.headers["authorization"].startswith("Bearer entra-token-")
    assert "api-key" not in request.headers


@pytest.mark.parametrize(
    ("settings", "variable"),
    [
        ({"llm_model": "d", "azure_openai_api_key": "k", "azure_openai_api_version": "v"}, "LLM_BASE_URL"),
        ({"llm_base_url": "https://r.openai.azure.com", "azure_openai_api_key": "k"}, "LLM_MODEL"),
        (
            {"llm_base_url": "https://r.openai.azure.com", "llm_model": "d", "azure_openai_api_key": "k"},
            "AZURE_OPENAI_API_VERSION",
        ),
        (
            {"llm_base_url": "https://r.openai.azure.com", "llm_model": "d", "azure_openai_api_version": "v"},
            "AZURE_OPENAI_API_KEY",
        ),
    ],
)
def test_a_missing_azure_setting_stops_start_up_naming_it(settings: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        build_llm_client(load_settings({}, llm_provider="azure_openai", **settings).llm)


def test_a_token_provider_that_does_not_load_stops_start_up() -> None:
    config = load_settings({}, llm_provider="openai", llm_token_provider="no_such_module:token").llm
    with pytest.raises(ConfigurationError, match="LLM_TOKEN_PROVIDER: cannot load no_such_module:token"):
        build_llm_client(config)


async def test_a_refused_deployment_key_names_the_azure_settings_not_openais() -> None:
    answers = [Failure(status=401, message="Access denied due to invalid subscription key.")]
    async with LoopbackLLMServer(OpenAIWire(), answers) as server:
        settings = load_settings(
            {},
            llm_provider="azure_openai",
            llm_base_url=server.base_url,
            azure_openai_api_key="wrong-key-0123456789",
            azure_openai_api_version="2024-10-21",
            llm_model="my-gpt-deployment",
        )
        client = build_llm_client(settings.llm)
        try:
            with pytest.raises(LLMRequestError) as caught:
                await client.chat(CONVERSATION, [])
        finally:
            await client.aclose()
    assert "check AZURE_OPENAI_API_KEY or LLM_TOKEN_PROVIDER" in str(caught.value)
    assert "wrong-key" not in str(caught.value)
