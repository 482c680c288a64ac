"""/health."""

from dishka.integrations.litestar import FromDishka, inject
from litestar import Response, get
from litestar.openapi.datastructures import ResponseSpec

from agentkit.application.health import CheckHealth
from agentkit.entrypoints.http.dto import HealthView


@get(
    "/health",
    tags=["health"],
    summary="Liveness and dependency checks",
    responses={503: ResponseSpec(HealthView, description="PostgreSQL or Redis is down")},
)
@inject
async def health(check: FromDishka[CheckHealth]) -> Response[HealthView]:
    """200 when every dependency answers, 503 otherwise; no API key needed."""
    report = await check.execute()
    view = HealthView(status="ok" if report.healthy else "degraded", checks=report.checks)
    return Response(view, status_code=200 if report.healthy else 503)
