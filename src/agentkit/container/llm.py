"""Choosing the LLM adapter from the settings."""

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.settings import Settings


def build_llm(settings: Settings) -> LLMClient:
    """The adapter named by LLM_PROVIDER."""
    if settings.llm_provider == "scripted":
        if not settings.llm_script:
            raise ConfigurationError("LLM_SCRIPT: the scripted provider needs a script file (LLM_SCRIPT or --script)")
        return ScriptedLLMClient.from_file(settings.llm_script)
    raise ConfigurationError(f"LLM_PROVIDER: unknown provider {settings.llm_provider!r}")
