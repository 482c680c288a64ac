"""`/console`: the browser console, served from files inside the package (no CDN, no build step).

The page is plain HTML, CSS and JavaScript modules under `static/console`. It holds no secret of the
server's: the person using it types an API key, which the page keeps in the tab's session storage
and sends in `X-API-Key` to the same /v1 routes every client uses. The page itself needs no key
(a browser cannot send a header when it navigates); everything it shows comes from those routes.

Every response carries a strict Content-Security-Policy: scripts and styles only from this app's
files (no inline script or style, no eval), requests only to this app, no frames, no forms posted
anywhere. With the page writing untrusted text only as text (never as HTML), a tool's output that
holds `<script>` is shown, not run.
"""

import functools
from pathlib import Path
from typing import Any

from litestar import Response, get
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

CONSOLE_PATH = "/console"
CONSOLE_ASSETS_PATH = "/console/assets"
_FILES = Path(__file__).with_name("static") / "console"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
# not versioned in their paths: a browser asks again (and gets 304) rather than run an old script
_REVALIDATE = CacheControlHeader(no_cache=True)


@get([CONSOLE_PATH, f"{CONSOLE_PATH}/"], include_in_schema=False, cache_control=_REVALIDATE)
async def console_page() -> Response[bytes]:
    """The console's one HTML page; the script it loads draws every view."""
    return Response(_page(), media_type="text/html", headers=SECURITY_HEADERS)


@functools.cache
def _page() -> bytes:
    return (_FILES / "index.html").read_bytes()  # read once: a file of the installed package


async def _secure(response: Response[Any]) -> Response[Any]:
    response.headers.update(SECURITY_HEADERS)
    return response


def console_routes() -> list[Any]:
    """The page and its assets (scripts, style); outside the OpenAPI document, no API key."""
    assets = create_static_files_router(
        path=CONSOLE_ASSETS_PATH,
        directories=[_FILES],
        name="console-assets",
        cache_control=_REVALIDATE,
        after_request=_secure,
        include_in_schema=False,
    )
    return [console_page, assets]
