"""OPTIONS for a path that more than one handler serves, with an `Allow` that names them all.

Litestar 2.25 makes the automatic OPTIONS handler of a path from its first handler only (`Allow:
DELETE, OPTIONS` where GET is served too); an explicit handler keeps the answer true.
"""

from litestar import Response, route
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler


def options_for(path: str, *methods: str) -> HTTPRouteHandler:
    """An OPTIONS handler for `path` (relative to its controller) whose `Allow` lists `methods` and OPTIONS.

    A controller's method: Litestar binds it to the controller instance.
    """
    allow = ", ".join(sorted({*methods, "OPTIONS"}))

    async def options(self: object) -> Response[None]:
        return Response(None, status_code=204, headers={"Allow": allow})

    return route(path, http_method=[HttpMethod.OPTIONS], include_in_schema=False)(options)
