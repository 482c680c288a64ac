"""The `openai`, `gemini` and `anthropic` providers' factories, light until a client is built.

The entry points name these functions, not the SDK-backed modules: each checks its settings first
(`provider_checks`), so a missing key is one line at once, and imports the SDK only for a client
that will be built.
"""

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.provider_checks import check_anthropic, check_azure_openai, check_gemini, check_openai
from agentkit.application.ports.llm_client import LLMClient


def build_openai_client(config: LLMConfig) -> LLMClient:
    """The `openai` provider's factory (entry point `agentkit.llm_providers`: openai).

    Raises:
        ConfigurationError: OPENAI_API_KEY is missing, LLM_BASE_URL is not an http(s) URL, or
            LLM_MODEL is missing for a compatible server.
    """
    check_openai(config)
    from agentkit.adapters.llm.openai_client import OpenAILLMClient  # the SDK only when used

    return OpenAILLMClient.from_config(config)


def build_gemini_client(config: LLMConfig) -> LLMClient:
    """The `gemini` provider's factory (entry point `agentkit.llm_providers`: gemini).

    Raises:
        ConfigurationError: GEMINI_API_KEY is missing, or LLM_BASE_URL is not an http(s) URL.
    """
    check_gemini(config)
    from agentkit.adapters.llm.gemini_client import GeminiLLMClient  # the SDK only when used

    return GeminiLLMClient.from_config(config)


def build_anthropic_client(config: LLMConfig) -> LLMClient:
    """The `anthropic` provider's factory (entry point `agentkit.llm_providers`: anthropic).

    Raises:
        ConfigurationError: ANTHROPIC_API_KEY is missing, or LLM_BASE_URL is not an http(s) URL.
    """
    check_anthropic(config)
    from agentkit.adapters.llm.anthropic_client import AnthropicLLMClient  # the SDK only when used

    return AnthropicLLMClient.from_config(config)


def build_azure_openai_client(config: LLMConfig) -> LLMClient:
    """The `azure_openai` provider's factory: Azure OpenAI's deployment API (api-version, deployment names).

    Raises:
        ConfigurationError: LLM_BASE_URL, LLM_MODEL or AZURE_OPENAI_API_VERSION is missing, or
            not exactly one of AZURE_OPENAI_API_KEY and LLM_TOKEN_PROVIDER is set.
    """
    check_azure_openai(config)
    from agentkit.adapters.llm.openai_client import OpenAILLMClient  # the SDK only when used

    return OpenAILLMClient.from_azure_config(config)
