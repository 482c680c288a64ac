"""Build the configured LLM client: the provider named by LLM_PROVIDER, under the one retry policy."""

from typing import TYPE_CHECKING

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.registry import ProviderRegistry
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.llm_client import LLMClient

if TYPE_CHECKING:
    from agentkit.adapters.llm.retry import RandomSource, Sleeper

__all__ = ["build_llm_client"]


def build_llm_client(
    config: LLMConfig,
    *,
    registry: ProviderRegistry | None = None,
    sleep: "Sleeper | None" = None,
    rand: "RandomSource | None" = None,
) -> LLMClient:
    """The LLM client this configuration names, wrapped in `RetryingLLMClient`.

    Call it once at start-up; close the client with `aclose()` at shutdown.

    Args:
        config: LLM_PROVIDER picks the provider; the provider reads the rest of LLM_*.
        registry: Where to look providers up (default: the installed entry points).
        sleep: The retry policy's sleeper (tests pass one that does not wait).
        rand: The retry policy's random source in [0, 1) (tests pass a fixed one).

    Raises:
        ConfigurationError: an unknown provider, a missing key or another bad setting; the
            message names the variable.
    """
    registry = registry or ProviderRegistry.from_entry_points()
    provider = config.llm_provider.strip().lower()
    factory = registry.factory(provider)
    try:
        client = factory(config)
    except ConfigurationError:
        raise
    except Exception as exc:  # a plug-in's bug must still stop start-up with one clear line
        raise ConfigurationError(
            f"LLM_PROVIDER: provider {provider!r} failed to build its client: {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(client, LLMClient):  # a plug-in's factory returned something else
        raise ConfigurationError(
            f"LLM_PROVIDER: provider {provider!r} did not build an LLMClient (provider, model and chat)"
        )
    # the retry policy (and structlog with it) only for a client that was built: a bad setting answers at once
    from agentkit.adapters.llm.retry import RetryingLLMClient, RetryPolicy

    return RetryingLLMClient(client, RetryPolicy.from_config(config), sleep=sleep, rand=rand)
