"""The API docs page: Swagger UI served from files inside the package, so `/docs` works offline.

Litestar's render plugins load their UI from a CDN by default (Scalar at `@latest`): a blank page
with no network, and a different UI whenever the CDN moves. Here the page names only URLs of this
app, under a path that carries the vendored version, so the assets can be cached for good.
"""

from pathlib import Path

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.static_files import create_static_files_router

SWAGGER_UI_VERSION = "5.35.0"
"""The vendored Swagger UI (static/swagger-ui-<version>/SOURCE.md says where it came from)."""

DOCS_ASSETS_PATH = f"/docs/assets/swagger-ui-{SWAGGER_UI_VERSION}"
_ASSETS_DIR = Path(__file__).with_name("static") / f"swagger-ui-{SWAGGER_UI_VERSION}"
_A_YEAR_S = 365 * 24 * 3600


def docs_ui() -> SwaggerRenderPlugin:
    """The render plugin for `/docs`: Swagger UI whose script, style and icon come from this app."""
    return SwaggerRenderPlugin(
        version=SWAGGER_UI_VERSION,
        js_url=f"{DOCS_ASSETS_PATH}/swagger-ui-bundle.js",
        css_url=f"{DOCS_ASSETS_PATH}/swagger-ui.css",
        standalone_preset_js_url=f"{DOCS_ASSETS_PATH}/swagger-ui-standalone-preset.js",
        # the default icon is fetched from a CDN too
        favicon=f"<link rel='icon' type='image/png' href='{DOCS_ASSETS_PATH}/favicon-32x32.png'>",
    )


def docs_assets() -> Router:
    """The route serving the vendored Swagger UI files; outside the OpenAPI document, no API key."""
    return create_static_files_router(
        path=DOCS_ASSETS_PATH,
        directories=[_ASSETS_DIR],
        name="docs-assets",
        # the path names the version: a new version is a new URL, so a browser may keep these for good
        cache_control=CacheControlHeader(public=True, max_age=_A_YEAR_S, immutable=True),
        include_in_schema=False,
    )
