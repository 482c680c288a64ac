"""`/docs` works with no network: every script, style and icon it names is served by the app itself."""

from collections.abc import AsyncIterator
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from dishka.integrations.litestar import LitestarProvider
from litestar.testing import AsyncTestClient

from agentkit.entrypoints.wiring import make_container
from agentkit.entrypoints.wiring.serving import http_app
from agentkit.entrypoints.wiring.settings import load_settings

CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class _Resources(HTMLParser):
    """Collects the URL of every <script src>, <link href> and <img src> of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"script": "src", "link": "href", "img": "src"}.get(tag)
        self.urls += [value for name, value in attrs if name == wanted and value]


def resources(html: str) -> list[str]:
    parser = _Resources()
    parser.feed(html)
    return parser.urls


@pytest.fixture
async def api() -> AsyncIterator[AsyncTestClient[Any]]:
    """The app on in-memory state: no PostgreSQL, no Redis."""
    env = {"STATE_BACKEND": "memory", "API_KEYS": "k" * 24, "LOG_LEVEL": "WARNING"}
    settings = load_settings(env)
    async with AsyncTestClient(http_app(make_container(settings, LitestarProvider()), settings)) as client:
        yield client


async def test_the_docs_page_names_only_urls_of_the_app_and_each_answers(api: AsyncTestClient[Any]) -> None:
    page = await api.get("/docs")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    urls = resources(page.text)
    assert {urlsplit(url).path.rsplit(".", 1)[-1] for url in urls} == {"js", "css", "png"}
    for url in urls:
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc) == ("", ""), f"{url} is not served by the app"
        assert parts.path.startswith("/")
        asset = await api.get(url)
        assert asset.status_code == 200, url
        assert asset.headers["content-type"].startswith(CONTENT_TYPES["." + parts.path.rsplit(".", 1)[-1]]), url
        assert asset.content, url


async def test_the_served_ui_is_swagger_ui_and_its_style_fetches_nothing_from_outside(
    api: AsyncTestClient[Any],
) -> None:
    urls = resources((await api.get("/docs")).text)
    script = next(url for url in urls if url.endswith("swagger-ui-bundle.js"))
    style = next(url for url in urls if url.endswith(".css"))

    bundle = (await api.get(script)).text
    css = (await api.get(style)).text

    assert "SwaggerUIBundle" in bundle  # the global the page's inline script calls
    # no web fonts or images from elsewhere: every url() in the stylesheet is inline data
    assert "@import" not in css
    assert css.count("url(") == css.count("url(data:") + css.count('url("data:')


async def test_the_assets_are_cacheable_and_outside_the_api_document(api: AsyncTestClient[Any]) -> None:
    urls = resources((await api.get("/docs")).text)
    document = await api.get("/docs/openapi.json")

    asset = await api.get(urls[0])
    assert "immutable" in asset.headers["cache-control"]
    assert document.status_code == 200
    assert document.headers["content-type"].startswith("application/vnd.oai.openapi+json")
    assert "/v1/runs" in document.json()["paths"]
    assert not [path for path in document.json()["paths"] if path.startswith("/docs")]


async def test_a_file_outside_the_vendored_ones_is_not_found(api: AsyncTestClient[Any]) -> None:
    urls = resources((await api.get("/docs")).text)
    folder = urls[0].rsplit("/", 1)[0]

    assert (await api.get(f"{folder}/missing.js")).status_code == 404
    assert (await api.get(f"{folder}/../../../../pyproject.toml")).status_code == 404
