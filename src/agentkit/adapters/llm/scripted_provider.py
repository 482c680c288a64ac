"""The `scripted` provider's factory: replays the JSON script named by LLM_SCRIPT (tests and demos)."""

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient


def build_scripted_client(config: LLMConfig) -> LLMClient:
    """A ScriptedLLMClient replaying `LLM_SCRIPT` (entry point `agentkit.llm_providers`: scripted).

    Raises:
        ConfigurationError: LLM_SCRIPT is unset, or the file is missing or not a valid script.
    """
    if not config.llm_script:
        raise ConfigurationError("LLM_SCRIPT is not set; LLM_PROVIDER=scripted replays the JSON script file it names")
    # every run replays the script from its start, so a server answers concurrent runs alike
    client = ScriptedLLMClient.from_file(config.llm_script, per_conversation=True)
    client.record_requests = False  # a server would keep every conversation it was sent
    return client
