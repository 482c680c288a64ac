"""The `scripted` provider's factory: replays the JSON script named by LLM_SCRIPT (tests and demos)."""

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.provider_checks import check_scripted
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.ports.llm_client import LLMClient


def build_scripted_client(config: LLMConfig) -> LLMClient:
    """A ScriptedLLMClient replaying `LLM_SCRIPT` (entry point `agentkit.llm_providers`: scripted).

    Raises:
        ConfigurationError: LLM_SCRIPT is unset, or the file is missing or not a valid script.
    """
    script = check_scripted(config)
    # every run replays the script from its start, so a server answers concurrent runs alike
    client = ScriptedLLMClient.from_file(script, per_conversation=True)
    client.record_requests = False  # a server would keep every conversation it was sent
    return client
