"""Prometheus metrics of runs and steps (prometheus-client), and their exposition."""

from agentkit.adapters.metrics.prometheus import PrometheusMetrics

__all__ = ["PrometheusMetrics"]
