"""`agentkit serve`: the HTTP API under uvicorn, on the embedded default or the configured servers."""

import argparse
from collections.abc import Mapping

import structlog
import uvicorn
from dishka.integrations.litestar import LitestarProvider
from litestar import Litestar

from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.settings import Settings, load_settings
from agentkit.container import make_container
from agentkit.entrypoints.cli.agent import DEMO_SCRIPT
from agentkit.entrypoints.http import create_app
from agentkit.entrypoints.logging import configure_logging

logger = structlog.get_logger(__name__)


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
    if environ.get("LLM_PROVIDER", "scripted") == "scripted" and not environ.get("LLM_SCRIPT"):
        overrides["llm_script"] = str(DEMO_SCRIPT)
    settings = load_settings(environ, **overrides)
    configure_logging(settings)
    if settings.llm_script == str(DEMO_SCRIPT) and settings.llm_provider == "scripted":
        logger.warning("demo_model", detail="no LLM provider configured: every run replays the scripted demo")
    if not settings.api_keys:
        logger.warning("no_api_keys", detail="API_KEYS is empty: every /v1 request will be refused")
    container = make_container(settings, LitestarProvider())
    # Build what start-up needs now, so a bad setting is one line here, not a trace in the lifespan.
    try:
        await container.get(RunScheduler)
    except BaseException:
        await container.close()
        raise
    server = uvicorn.Server(server_config(create_app(container, settings), settings))
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
    )
