"""Serving the HTTP API: settings, start-up, the container, the app and uvicorn, in that order."""

import contextlib
import gc
import signal
from collections.abc import Callable, Iterator

import structlog
import uvicorn
from dishka import AsyncContainer
from dishka.integrations.litestar import LitestarProvider
from litestar import Litestar

from agentkit.adapters.metrics import PrometheusMetrics, serve_metrics
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.entrypoints.http import ApiConfig, create_app
from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.providers.agents import mcp_servers_listed
from agentkit.entrypoints.wiring.providers.core import BuiltLLMProvider, api_config_of
from agentkit.entrypoints.wiring.settings import Settings, metrics_address
from agentkit.entrypoints.wiring.startup import started_state

logger = structlog.get_logger(__name__)


class DrainingServer(uvicorn.Server):
    """uvicorn that tells AgentKit the moment a stop signal arrives, not after the connections close.

    uvicorn first waits for in-flight requests and only then runs the app's shutdown; a long poll or a
    sync POST would hold the runs' grace period back by up to a minute. Told at once, the scheduler
    ends every wait (those requests answer with the run's current state), refuses new runs and starts
    the grace period alongside uvicorn's own draining.
    """

    def __init__(self, config: uvicorn.Config, *, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_stop = on_stop
        self._stop_told = False
        self.stop_signals: list[int] = []

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, but the stop signal is kept in `stop_signals` rather than raised again as serving ends.

        uvicorn raises it again at once so the exit status tells why the process stopped; with the
        default SIGTERM handler that ends the process there, before start-up's embedded PostgreSQL
        and Redis are stopped, and they would outlive it. `serve_http` raises it after they stopped.
        """
        with super().capture_signals():
            yield
            self.stop_signals = list(self._captured_signals)  # uvicorn 0.54's record of the signals
            self._captured_signals.clear()

    async def on_tick(self, counter: int) -> bool:
        """uvicorn's tick (every 0.1 s); the first one that sees the stop signal tells the scheduler."""
        should_exit = await super().on_tick(counter)
        if should_exit and not self._stop_told:
            self._stop_told = True
            logger.info("stopping")
            self._on_stop()
        return should_exit


async def serve_http(settings: Settings, llm: LLMClient | None) -> None:
    """Serve the API on these settings and this LLM client (its builder closes it; None: the container builds
    one if it needs one, as in queue mode, where the workers run the agent).

    With no servers configured (the root chose STATE_BACKEND=embedded), a private PostgreSQL and
    Redis start first.
    """
    configure_logging(settings.logging)
    if settings.llm.llm_provider == "demo":
        logger.warning("demo_model", detail="no LLM provider configured: runs are played by the rule-based demo model")
    if not settings.http.api_keys:
        logger.warning("no_api_keys", detail="API_KEYS is empty: every /v1 request will be refused")
    async with started_state(settings, check_schema=True) as endpoints:
        given = [] if llm is None else [BuiltLLMProvider(llm)]
        container = make_container(settings, LitestarProvider(), *given, endpoints=endpoints)
        # Build what serving needs now, so a bad setting is one line here, not a trace in the lifespan.
        try:
            scheduler = await container.get(RunScheduler)
            app = await build_http_app(container)
            await mcp_servers_listed(container, settings.agents.mcp_connect_timeout_s)
            stop_metrics = await start_metrics_listener(container, settings)
        except BaseException:
            await container.close()
            raise
        server = DrainingServer(
            server_config(app, settings),
            on_stop=lambda: scheduler.begin_shutdown(settings.loop.shutdown_grace_s),
        )
        http = settings.http
        base = f"http://{http.host}:{http.port}"
        logger.info("serving", url=base, docs=f"{base}/docs", console=f"{base}/console")
        # What exists now (modules, the app, the container's clients) lives as long as the process: frozen,
        # the collector stops walking it, and a full collection no longer stalls every request in flight
        # (about 140,000 objects, 75 ms or more under load: most of a p99).
        gc.collect()
        gc.freeze()
        try:
            await server.serve()  # the app's lifespan closes the container when it stops
        finally:
            gc.unfreeze()
            stop_metrics()
    # the servers are stopped: now the signal may end the process, with the status it means
    for sig in reversed(server.stop_signals):
        signal.raise_signal(sig)


async def start_metrics_listener(container: AsyncContainer, settings: Settings) -> Callable[[], None]:
    """With METRICS_BIND set (and metrics on), /metrics on a listener of its own; return its stop function."""
    address = metrics_address(settings)
    metrics = await container.get(PrometheusMetrics | None)
    if address is None or metrics is None:
        return lambda: None
    port, stop = serve_metrics(metrics, *address)
    logger.info("metrics_listening", url=f"http://{address[0]}:{port}/metrics")
    return stop


async def build_http_app(container: AsyncContainer) -> Litestar:
    """The HTTP API on this container (with LitestarProvider among its providers)."""
    return create_app(container, await container.get(ApiConfig))


def http_app(container: AsyncContainer, settings: Settings) -> Litestar:
    """The HTTP API on this container, configured from these settings (the container's own)."""
    return create_app(container, api_config_of(settings))


def server_config(app: Litestar, settings: Settings) -> uvicorn.Config:
    """Uvicorn's configuration for the app.

    X-Forwarded-For is trusted only from the proxies in FORWARDED_ALLOW_IPS (uvicorn's own default
    trusts any loopback peer), so a client cannot name its own address and dodge a per-address limit.
    """
    http = settings.http
    return uvicorn.Config(
        app,
        host=http.host,
        port=http.port,
        log_config=None,
        access_log=False,
        lifespan="on",
        proxy_headers=bool(http.forwarded_allow_ips),
        forwarded_allow_ips=list(http.forwarded_allow_ips),
        # a request that still runs this long after the stop signal is cut off; waits end at once anyway
        timeout_graceful_shutdown=max(1, round(settings.loop.shutdown_grace_s)),
    )
