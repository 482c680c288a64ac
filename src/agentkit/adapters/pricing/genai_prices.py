"""GenAIPriceTable: costs from `genai-prices`, the price table pydantic maintains for LLM APIs.

The package ships its table in the wheel; nothing is fetched at run time (its auto-update is never
started). A model it does not know, or a provider it cannot name (a local server behind
LLM_BASE_URL), has no price: the cost is None, never 0.
"""

import functools
from typing import Final

import genai_prices
import structlog

from agentkit.application.ports.price_table import PriceTable
from agentkit.domain.messages import Usage

_log = structlog.get_logger(__name__)

# AgentKit's provider names (LLM_PROVIDER) to the package's provider ids.
PROVIDER_IDS: Final = {"openai": "openai", "gemini": "google", "anthropic": "anthropic", "azure_openai": "azure"}


class GenAIPriceTable(PriceTable):
    """Prices by (provider, model) from `genai-prices`.

    Args:
        base_url: LLM_BASE_URL: an OpenAI-compatible server elsewhere than OpenAI is priced by its
            URL where the table knows it, and is unknown where not.
        provider_ids: Overrides of the provider-name mapping (a plug-in provider's name).
    """

    def __init__(self, *, base_url: str | None = None, provider_ids: dict[str, str] | None = None) -> None:
        self._base_url = base_url
        self._provider_ids = {**PROVIDER_IDS, **(provider_ids or {})}

    def cost_usd(self, provider: str, model: str, usage: Usage) -> float | None:
        """The cost of `usage`, or None when the model's price is unknown."""
        provider_id = self._provider_ids.get(provider)
        if provider_id is None or not model:
            return None
        url = self._base_url if provider == "openai" else None
        return _price(
            provider_id,
            url,
            model,
            (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens),
        )


@functools.lru_cache(maxsize=4096)
def _price(provider_id: str, base_url: str | None, model: str, tokens: tuple[int, int, int, int]) -> float | None:
    # cached: a lookup takes ~0.1 ms, and a run's calls repeat the same few (model, usage) pairs.
    # The table's input_tokens include the cached ones, as ours do; cache reads and writes are
    # priced at the model's cache prices.
    input_tokens, output_tokens, cache_read, cache_write = tokens
    usage = genai_prices.Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read or None,
        cache_write_tokens=cache_write or None,
    )
    try:
        if base_url is not None:
            found = genai_prices.calc_price(usage, model, provider_api_url=base_url)
        else:
            found = genai_prices.calc_price(usage, model, provider_id=provider_id)
    except LookupError:
        return None
    except Exception as exc:  # the table's own trouble must never cost a run
        _log.warning("price_lookup_failed", model=model, error=str(exc)[:200])
        return None
    return float(found.total_price)
