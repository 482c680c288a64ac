"""Prometheus metrics of runs and steps (prometheus-client), and their exposition."""

from agentkit.adapters.metrics.listener import serve_metrics
from agentkit.adapters.metrics.prometheus import PrometheusMetrics

__all__ = ["PrometheusMetrics", "serve_metrics"]
