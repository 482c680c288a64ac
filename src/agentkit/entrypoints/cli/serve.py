"""`agentkit serve`: the HTTP API under uvicorn, on the embedded default or the configured servers."""

import argparse
from collections.abc import Callable, Mapping

import structlog
import uvicorn
from dishka.integrations.litestar import LitestarProvider
from litestar import Litestar

from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.settings import Settings, load_settings
from agentkit.container import make_container
from agentkit.entrypoints.http import create_app
from agentkit.entrypoints.logging import configure_logging

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

    async def on_tick(self, counter: int) -> bool:
        """uvicorn's tick (every 0.1 s); the first one that sees the stop signal tells the scheduler."""
        should_exit = await super().on_tick(counter)
        if should_exit and not self._stop_told:
            self._stop_told = True
            logger.info("stopping")
            self._on_stop()
        return should_exit


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `serve` to the parser."""
    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", help="interface to listen on (overrides HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (overrides PORT)")
    serve.set_defaults(handler=serve_command)


async def serve_command(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Start the API; with no servers configured, start a private PostgreSQL and Redis first."""
    overrides: dict[str, object] = {"host": args.host, "port": args.port}
    if environ.get("STATE_BACKEND", "auto") in ("", "auto"):
        overrides["state_backend"] = "embedded"  # configured servers still win: see plan_state
    settings = load_settings(environ, **overrides)
    configure_logging(settings)
    if settings.llm_provider == "demo":
        logger.warning("demo_model", detail="no LLM provider configured: runs are played by the rule-based demo model")
    if not settings.api_keys:
        logger.warning("no_api_keys", detail="API_KEYS is empty: every /v1 request will be refused")
    container = make_container(settings, LitestarProvider())
    # Build what start-up needs now, so a bad setting is one line here, not a trace in the lifespan.
    try:
        scheduler = await container.get(RunScheduler)
    except BaseException:
        await container.close()
        raise
    server = DrainingServer(
        server_config(create_app(container, settings), settings),
        on_stop=lambda: scheduler.begin_shutdown(settings.shutdown_grace_s),
    )
    logger.info(
        "serving", url=f"http://{settings.host}:{settings.port}", docs=f"http://{settings.host}:{settings.port}/docs"
    )
    await server.serve()
    return 0


def server_config(app: Litestar, settings: Settings) -> uvicorn.Config:
    """Uvicorn's configuration for the app.

    X-Forwarded-For is trusted only from the proxies in FORWARDED_ALLOW_IPS (uvicorn's own default
    trusts any loopback peer), so a client cannot name its own address and dodge a per-address limit.
    """
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        lifespan="on",
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=list(settings.forwarded_allow_ips),
        # a request that still runs this long after the stop signal is cut off; waits end at once anyway
        timeout_graceful_shutdown=max(1, round(settings.shutdown_grace_s)),
    )
