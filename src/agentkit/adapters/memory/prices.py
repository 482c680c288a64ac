"""FixedPriceTable: prices given by the caller (tests, benchmarks), the rest unknown."""

from collections.abc import Mapping

from agentkit.application.ports.price_table import PriceTable
from agentkit.domain.messages import Usage


class FixedPriceTable(PriceTable):
    """US dollars per million input and output tokens, per (provider, model); any other model is unknown.

    Args:
        prices: `{(provider, model): (input_usd_per_mtok, output_usd_per_mtok)}`.
    """

    def __init__(self, prices: Mapping[tuple[str, str], tuple[float, float]]) -> None:
        self._prices = dict(prices)

    def cost_usd(self, provider: str, model: str, usage: Usage) -> float | None:
        """The cost at the given price, or None for a model without one."""
        price = self._prices.get((provider, model))
        if price is None:
            return None
        per_input, per_output = price
        return (usage.input_tokens * per_input + usage.output_tokens * per_output) / 1_000_000
