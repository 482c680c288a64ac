"""What each built-in provider needs from LLMConfig: one check per provider, made once, before its SDK loads.

The provider's factory (`sdk_providers`, `scripted_provider`) calls its check first, so a missing
key or a bad base URL stops start-up with one line naming the variable, at once and without
importing the SDK (a second or two of imports). The clients' `from_config` take settings these
checks accepted and do not check them again.
"""

from urllib.parse import urlsplit

from agentkit.adapters.llm.config import LLMConfig
from agentkit.application.errors import ConfigurationError


def check_openai(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `openai` provider cannot be built."""
    if not config.openai_api_key and not config.llm_token_provider:
        raise ConfigurationError(
            "OPENAI_API_KEY is not set; LLM_PROVIDER=openai needs it, or LLM_TOKEN_PROVIDER "
            "(for a local server that takes no key, set any value)"
        )
    _check_base_url(config)
    if config.llm_base_url and not config.llm_model:
        # a compatible server's model names cannot be guessed
        raise ConfigurationError("LLM_MODEL is not set; name the model the server at LLM_BASE_URL serves")


def check_gemini(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `gemini` provider cannot be built."""
    if not config.gemini_api_key:
        raise ConfigurationError("GEMINI_API_KEY is not set; LLM_PROVIDER=gemini needs it")
    _check_base_url(config)


def check_azure_openai(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `azure_openai` provider cannot be built."""
    if not config.llm_base_url:
        raise ConfigurationError(
            "LLM_BASE_URL is not set; LLM_PROVIDER=azure_openai needs the resource's endpoint, "
            "such as https://my-resource.openai.azure.com"
        )
    _check_base_url(config)
    if not config.llm_model:
        raise ConfigurationError("LLM_MODEL is not set; name the Azure OpenAI deployment")
    if not config.azure_openai_api_version:
        raise ConfigurationError(
            "AZURE_OPENAI_API_VERSION is not set; LLM_PROVIDER=azure_openai needs it, such as 2024-10-21 "
            "(for the v1 API use LLM_PROVIDER=openai with LLM_BASE_URL=https://<resource>.openai.azure.com/openai/v1)"
        )
    if bool(config.azure_openai_api_key) == bool(config.llm_token_provider):
        raise ConfigurationError(
            "LLM_PROVIDER=azure_openai needs either AZURE_OPENAI_API_KEY or LLM_TOKEN_PROVIDER (Entra ID), not both"
        )


def check_anthropic(config: LLMConfig) -> None:
    """Raise ConfigurationError naming the variable when the `anthropic` provider cannot be built."""
    if not config.anthropic_api_key:
        raise ConfigurationError(
            "ANTHROPIC_API_KEY is not set; LLM_PROVIDER=anthropic needs it "
            "(for a local server that takes no key, set any value)"
        )
    _check_base_url(config)


def check_scripted(config: LLMConfig) -> str:
    """The script the `scripted` provider replays (LLM_SCRIPT); ConfigurationError naming the variable if unset."""
    if not config.llm_script:
        raise ConfigurationError("LLM_SCRIPT is not set; LLM_PROVIDER=scripted replays the JSON script file it names")
    return config.llm_script


def _check_base_url(config: LLMConfig) -> None:
    """LLM_BASE_URL, when set, is an http(s) URL with a host and a numeric port, if any.

    Without this a typo (`localhost:11434/v1`, no scheme) surfaced only at the first call, as a
    connection error retried until the run failed. The message never repeats the value: a
    gateway's key may sit in its user part or query.
    """
    if not config.llm_base_url:
        return
    parts = urlsplit(config.llm_base_url)
    try:
        parts.port  # noqa: B018 - parsing the port is the check: a non-number raises ValueError
    except ValueError:
        valid = False
    else:
        valid = parts.scheme in {"http", "https"} and bool(parts.hostname)
    if not valid:
        raise ConfigurationError(
            "LLM_BASE_URL: expected an http:// or https:// URL with a host, such as http://127.0.0.1:11434/v1"
        )
