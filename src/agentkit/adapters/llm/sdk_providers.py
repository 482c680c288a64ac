"""The `openai` and `gemini` providers' factories, light until a client is built.

The entry points name these functions, not the SDK-backed modules: the settings are checked first,
so a missing key is one line at once, and the SDK (a second or two of imports each) is loaded only
for a client that will be built.
"""

from agentkit.adapters.llm.config import LLMConfig
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient


def check_openai_config(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `openai` provider cannot be built."""
    if not config.openai_api_key:
        raise ConfigurationError(
            "OPENAI_API_KEY is not set; LLM_PROVIDER=openai needs it "
            "(for a local server that takes no key, set any value)"
        )
    if config.llm_base_url and not config.llm_model:
        raise ConfigurationError("LLM_MODEL is not set; name the model the server at LLM_BASE_URL serves")


def check_gemini_config(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `gemini` provider cannot be built."""
    if not config.gemini_api_key:
        raise ConfigurationError("GEMINI_API_KEY is not set; LLM_PROVIDER=gemini needs it")


def build_openai_client(config: LLMConfig) -> LLMClient:
    """The `openai` provider's factory (entry point `agentkit.llm_providers`: openai)."""
    check_openai_config(config)
    from agentkit.adapters.llm.openai_client import OpenAILLMClient  # the SDK only when used

    return OpenAILLMClient.from_config(config)


def build_gemini_client(config: LLMConfig) -> LLMClient:
    """The `gemini` provider's factory (entry point `agentkit.llm_providers`: gemini)."""
    check_gemini_config(config)
    from agentkit.adapters.llm.gemini_client import GeminiLLMClient  # the SDK only when used

    return GeminiLLMClient.from_config(config)
