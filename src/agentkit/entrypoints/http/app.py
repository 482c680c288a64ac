"""The Litestar app factory: routes, errors, docs, lifespan, and the dishka container (no globals)."""

import contextlib
from collections.abc import AsyncIterator

import structlog
from dishka import AsyncContainer
from dishka.integrations.litestar import setup_dishka
from litestar import Litestar, Router
from litestar.di import Provide
from litestar.openapi.config import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme

from agentkit._version import __version__
from agentkit.application.ports.background_work import BackgroundWork
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.ports.trace_context import TraceContext
from agentkit.entrypoints.http.a2a import a2a_routes
from agentkit.entrypoints.http.agents import chat_route, list_agents, tools_route
from agentkit.entrypoints.http.auth import API_KEY_HEADER, ApiKeys, authenticate, require_api_key
from agentkit.entrypoints.http.auth_throttle import FailedKeyThrottle
from agentkit.entrypoints.http.config import ApiConfig
from agentkit.entrypoints.http.console import console_routes
from agentkit.entrypoints.http.cors import cors_config
from agentkit.entrypoints.http.docs import docs_assets, docs_ui
from agentkit.entrypoints.http.meta import health, metrics
from agentkit.entrypoints.http.middleware import request_context, trace_context
from agentkit.entrypoints.http.problems import EXCEPTION_HANDLERS
from agentkit.entrypoints.http.runs import runs_controller
from agentkit.entrypoints.http.sessions import SessionsController
from agentkit.entrypoints.http.shedding import shed_when_full
from agentkit.entrypoints.http.webhooks import RunWebhooksController

logger = structlog.get_logger(__name__)

API_KEY_SCHEME = SecurityScheme(type="apiKey", name=API_KEY_HEADER, security_scheme_in="header")


def create_app(container: AsyncContainer, config: ApiConfig) -> Litestar:
    """The HTTP API on this container. The app starts the scheduler and the background work (the webhook
    sender), and stops them and closes the container when it shuts down."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        scheduler = await container.get(RunScheduler)
        background = await container.get(BackgroundWork)
        await scheduler.start()
        await background.start()
        logger.info("api_started", api_keys=len(config.api_keys))
        try:
            yield
        finally:
            await scheduler.shutdown(config.shutdown_grace_s)
            await background.stop()  # after the runs: their last events are stored before it stops
            await container.close()
            logger.info("api_stopped")

    v1 = Router(
        path="/v1",
        route_handlers=[
            runs_controller(config),
            RunWebhooksController,
            SessionsController,
            tools_route(config),
            list_agents,
            chat_route(config),
        ],
        dependencies={"owner": Provide(authenticate)},
        guards=[require_api_key],
        security=[{"ApiKey": []}],
    )
    guarded = [Router(path="/", route_handlers=[metrics], guards=[require_api_key], security=[{"ApiKey": []}])]
    app = Litestar(
        route_handlers=[
            v1,
            health,
            docs_assets(),
            *a2a_routes(config),
            *console_routes(),
            *(guarded if config.metrics_route else []),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        request_max_body_size=config.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="AgentKit",
            version=__version__,
            description="Run agents on typed tools; every step traced.",
            path="/docs",
            render_plugins=[docs_ui()],
            components=Components(security_schemes={"ApiKey": API_KEY_SCHEME}),
        ),
        middleware=[request_context],
        cors_config=cors_config(config.cors_origins),
        logging_config=None,  # Litestar's default replaces the root handler: configure_logging owns it
        debug=False,
    )
    app.state.api_keys = ApiKeys(config.api_keys)
    app.state.auth_throttle = FailedKeyThrottle(limit_per_min=config.auth_failures_per_min)
    setup_dishka(container, app)
    # outside the framework, so the whole request (the run it accepts) is in the caller's trace
    app.asgi_handler = trace_context(app.asgi_handler, lambda: container.get(TraceContext))
    # outermost, so that a refusal under overload skips even dishka's request scope
    app.asgi_handler = shed_when_full(
        app.asgi_handler,
        admission=lambda: container.get(RunAdmission),
        keys=app.state.api_keys,
        throttle=app.state.auth_throttle,
    )
    return app
