"""Tests of the LLM provider adapters, the retry policy and the provider registry."""
