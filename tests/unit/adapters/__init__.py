"""Tests of the outbound adapters."""
