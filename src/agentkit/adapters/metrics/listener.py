"""A listener of its own for /metrics (METRICS_BIND), apart from the API and its keys."""

from collections.abc import Callable

from prometheus_client import start_http_server

from agentkit.adapters.metrics.prometheus import PrometheusMetrics


def serve_metrics(metrics: PrometheusMetrics, host: str, port: int) -> tuple[int, Callable[[], None]]:
    """Serve the metrics at http://host:port/metrics from a thread; return the port and a stop function.

    Port 0 takes a free port (tests). The listener needs no key: bind it where only the scraper reaches.
    """
    server, thread = start_http_server(port, addr=host, registry=metrics.registry)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return server.server_port, stop
