"""The PriceTable port: what an LLM call cost."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.messages import Usage


class PriceTable(Protocol):
    """Prices of models, per provider."""

    @abstractmethod
    def cost_usd(self, provider: str, model: str, usage: Usage) -> float | None:
        """What `usage` of `model` at `provider` costs in US dollars; None when its price is unknown.

        Never raises and never answers 0 for want of a price: an unknown price is None.
        """
