"""/health and /metrics."""

from dishka.integrations.litestar import FromDishka, inject
from litestar import Response, get
from litestar.openapi.datastructures import ResponseSpec

from agentkit.application.health import CheckHealth
from agentkit.application.ports.metrics_exporter import MetricsExporter
from agentkit.entrypoints.http.dto.health import HealthView
from agentkit.entrypoints.http.problems import problem_responses


@get(
    "/health",
    tags=["health"],
    summary="Liveness and dependency checks",
    responses={
        503: ResponseSpec(
            HealthView,
            description=(
                "PostgreSQL or Redis is down (`down`), or the database's schema is behind the code "
                "(`schema_behind`: run `agentkit migrate`)"
            ),
        )
    },
)
@inject
async def health(check: FromDishka[CheckHealth]) -> Response[HealthView]:
    """200 when every dependency answers and is ready, 503 otherwise; no API key needed."""
    report = await check.execute()
    view = HealthView(status="ok" if report.healthy else "degraded", checks=report.checks)
    return Response(view, status_code=200 if report.healthy else 503)


@get(
    "/metrics",
    tags=["metrics"],
    summary="Prometheus metrics",
    description=(
        "Runs by status, runs in flight and queued, run and step latency histograms (by kind, tool and "
        "model), tokens, cost, LLM errors, provider retries and tool errors, in Prometheus's text format. "
        "Behind the API key; with METRICS_BIND set it is served there instead, and not here."
    ),
    media_type="text/plain; version=0.0.4; charset=utf-8",
    responses=problem_responses(401),
    include_in_schema=True,
)
@inject
async def metrics(exporter: FromDishka[MetricsExporter]) -> Response[bytes]:
    """Every metric now."""
    return Response(exporter.render(), media_type=exporter.content_type)
