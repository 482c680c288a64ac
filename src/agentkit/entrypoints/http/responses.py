"""The answer to a request that waited for a run: the run at rest, or 202 with where and when to look again."""

from typing import Final, TypeVar

from litestar import Response

from agentkit.domain.run import Run

RETRY_AFTER_S: Final = "1"
"""What a client still waiting for a run is told to wait before it polls."""

View = TypeVar("View")


def waited_response(view: View, run: Run, headers: dict[str, str], *, at_rest_status: int) -> Response[View]:
    """`at_rest_status` when the run ended or waits on its client (nothing to poll for), else 202 with Retry-After."""
    if run.is_at_rest:
        return Response(view, status_code=at_rest_status, headers=headers)
    return Response(view, status_code=202, headers={**headers, "Retry-After": RETRY_AFTER_S})
