"""agentkit-acme: the Acme completion API as an AgentKit LLM provider (`LLM_PROVIDER=acme`)."""

from agentkit.adapters.llm.config import LLMConfig
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient
from agentkit_acme.client import AcmeLLMClient

__all__ = ["AcmeLLMClient", "build_client"]


def build_client(config: LLMConfig) -> LLMClient:
    """The provider's factory (entry point `agentkit.llm_providers`: acme).

    Reads LLM_BASE_URL (required), LLM_MODEL (default `acme-1`), LLM_MAX_TOKENS and
    LLM_REQUEST_TIMEOUT_S. No retries here: AgentKit's retry policy wraps the client.
    """
    if not config.llm_base_url:
        raise ConfigurationError("LLM_BASE_URL is not set; LLM_PROVIDER=acme needs the Acme server's URL")
    return AcmeLLMClient(
        base_url=config.llm_base_url,
        model=config.llm_model or "acme-1",
        max_tokens=config.llm_max_tokens,
        timeout_s=config.llm_request_timeout_s,
    )
