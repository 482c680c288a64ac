"""What LLM calls cost: the maintained price table of the `genai-prices` package."""

from agentkit.adapters.pricing.genai_prices import GenAIPriceTable

__all__ = ["GenAIPriceTable"]
