"""The LLM provider registry: provider names to factories, fed by the `agentkit.llm_providers` entry points.

A provider is a callable `(LLMConfig) -> LLMClient` that a distribution registers under the
entry-point group, so a new provider is a new package and AgentKit does not change::

    [project.entry-points."agentkit.llm_providers"]
    acme = "acme_agentkit:build_client"

Entry points are loaded only when their provider is chosen: an SDK that is not used is never
imported, and a broken plug-in cannot stop the others from working.
"""

from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points

from agentkit.adapters.llm.config import LLMConfig
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient

ENTRY_POINT_GROUP = "agentkit.llm_providers"

LLMClientFactory = Callable[[LLMConfig], LLMClient]

# The built-ins, also declared as entry points in AgentKit's pyproject.toml; kept here too so a
# source checkout whose installed metadata is stale still finds them.
BUILTIN_PROVIDERS: dict[str, str] = {
    "openai": "agentkit.adapters.llm.sdk_providers:build_openai_client",
    "gemini": "agentkit.adapters.llm.sdk_providers:build_gemini_client",
    "anthropic": "agentkit.adapters.llm.sdk_providers:build_anthropic_client",
    "azure_openai": "agentkit.adapters.llm.sdk_providers:build_azure_openai_client",
    "scripted": "agentkit.adapters.llm.scripted_provider:build_scripted_client",
    "demo": "agentkit.adapters.llm.demo:build_demo_client",
}


class ProviderRegistry:
    """Finds a provider's factory by the name in `LLM_PROVIDER`.

    Args:
        entries: The entry points to offer; the built-ins fill in any name they leave out.
    """

    def __init__(self, entries: Iterable[EntryPoint] = ()) -> None:
        self._entries: dict[str, list[EntryPoint]] = {}
        for entry in entries:
            if all(entry.value != known.value for known in self._entries.get(entry.name, [])):
                self._entries.setdefault(entry.name, []).append(entry)
        for name, value in BUILTIN_PROVIDERS.items():
            self._entries.setdefault(name, [EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)])

    @classmethod
    def from_entry_points(cls, group: str = ENTRY_POINT_GROUP) -> "ProviderRegistry":
        """The providers every installed distribution registers under `group`."""
        return cls(entry_points(group=group))

    def names(self) -> list[str]:
        """The provider names on offer, sorted."""
        return sorted(self._entries)

    def factory(self, name: str) -> LLMClientFactory:
        """Load the factory of provider `name`.

        Raises:
            ConfigurationError: the name is unknown, registered twice, or its entry point does
                not load to a callable; the message names LLM_PROVIDER.
        """
        candidates = self._entries.get(name)
        if not candidates:
            raise ConfigurationError(
                f"LLM_PROVIDER: unknown provider {name!r}; installed providers: {', '.join(self.names())}"
            )
        if len(candidates) > 1:
            values = ", ".join(sorted(entry.value for entry in candidates))
            raise ConfigurationError(f"LLM_PROVIDER: provider {name!r} is registered more than once ({values})")
        entry = candidates[0]
        try:
            loaded = entry.load()
        except Exception as exc:
            raise ConfigurationError(
                f"LLM_PROVIDER: provider {name!r} ({entry.value}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(loaded):
            raise ConfigurationError(f"LLM_PROVIDER: provider {name!r} ({entry.value}) is not a callable factory")
        factory: LLMClientFactory = loaded
        return factory
