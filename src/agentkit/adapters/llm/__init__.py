"""LLM provider adapters behind the LLMClient port."""
