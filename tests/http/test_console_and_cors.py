"""The console's page and assets (strict CSP, no inline script), CORS on and off, and runs listed by agent."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agentkit.application.errors import ConfigurationError
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.wiring.settings import load_settings
from tests.http_fixtures import ApiFactory, headers

CONSOLE_FILES = Path(__file__).parents[2] / "src/agentkit/entrypoints/http/static/console"
ORIGIN = "http://127.0.0.1:5173"


class _Scripts(HTMLParser):
    """Every script's `src`, inline script or style text, and style attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str | None] = []
        self.inline: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self.sources.append(found.get("src"))
        if tag in {"script", "style"}:
            self._in = tag
        if "style" in found or any(name.startswith("on") for name in found):
            self.inline.append(f"{tag} attribute")

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in and data.strip():
            self.inline.append(data)


async def test_the_console_page_has_a_strict_policy_and_no_inline_script(api_factory: ApiFactory) -> None:
    api = await api_factory()

    page = await api.get("/console")  # no key: the page asks for one

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    parsed = _Scripts()
    parsed.feed(page.text)
    assert parsed.sources == ["/console/assets/app.js"]
    assert parsed.inline == []
    assert "http" not in page.text.replace("http-equiv", "")  # no CDN, no other site


@pytest.mark.parametrize("asset", ["app.js", "api.js", "run.js", "console.css"])
async def test_the_assets_come_from_the_package_with_the_same_policy(api_factory: ApiFactory, asset: str) -> None:
    api = await api_factory()

    response = await api.get(f"/console/assets/{asset}")

    assert response.status_code == 200
    assert response.content == (CONSOLE_FILES / asset).read_bytes()
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


def test_the_scripts_never_write_html_nor_evaluate_text() -> None:
    for script in CONSOLE_FILES.glob("*.js"):
        code = script.read_text()
        for risky in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert risky not in code, f"{script.name} uses {risky}"
        assert not re.search(r"https?://", code), f"{script.name} names another site"
        assert "localStorage" not in code, f"{script.name} keeps something beyond the tab's session"


async def test_cors_is_off_by_default(api_factory: ApiFactory) -> None:
    api = await api_factory([LLMResponse(text="x")])

    preflight = await api.options("/v1/runs", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    answer = await api.get("/v1/agents", headers=headers(Origin=ORIGIN))

    assert "access-control-allow-origin" not in preflight.headers
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers


async def test_a_listed_origin_gets_its_preflight_answered_without_credentials(api_factory: ApiFactory) -> None:
    api = await api_factory([LLMResponse(text="x")], cors_origins=(ORIGIN, "https://dash.example.com"))

    preflight = await api.options(
        "/v1/runs",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-api-key, content-type",
        },
    )

    assert preflight.status_code == 204  # before any guard: a preflight carries no key
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "x-api-key" in preflight.headers["access-control-allow-headers"].lower()
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in preflight.headers


async def test_answers_to_a_listed_origin_are_readable_errors_included(api_factory: ApiFactory) -> None:
    api = await api_factory([LLMResponse(text="hello")], cors_origins=(ORIGIN,))

    created = await api.post("/v1/runs", json={"goal": "hi"}, headers=headers(Origin=ORIGIN))
    refused = await api.get("/v1/agents", headers={"Origin": ORIGIN, "X-API-Key": "wrong"})

    assert created.status_code == 201
    assert created.headers["access-control-allow-origin"] == ORIGIN
    assert "Origin" in created.headers["vary"]
    assert "location" in created.headers["access-control-expose-headers"].lower()
    assert "access-control-allow-credentials" not in created.headers
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == ORIGIN  # the page can read the problem


async def test_an_unlisted_origin_is_refused(api_factory: ApiFactory) -> None:
    api = await api_factory([LLMResponse(text="x")], cors_origins=(ORIGIN,))

    preflight = await api.options(
        "/v1/runs", headers={"Origin": "http://127.0.0.1:9999", "Access-Control-Request-Method": "POST"}
    )
    answer = await api.get("/v1/agents", headers=headers(Origin="http://127.0.0.1:9999"))

    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in answer.headers


@pytest.mark.parametrize("value", ["*", "http://example.com/", "example.com", "http://*.example.com", "https://a.b/c"])
def test_cors_origins_must_be_explicit_origins(value: str) -> None:
    with pytest.raises(ConfigurationError, match="CORS_ORIGINS"):
        load_settings({"CORS_ORIGINS": value})


def test_cors_origins_is_a_comma_separated_list() -> None:
    settings = load_settings({"CORS_ORIGINS": "http://localhost:3000, https://dash.example.com"})
    assert settings.http.cors_origins == ("http://localhost:3000", "https://dash.example.com")


async def test_runs_are_listed_by_agent(api_factory: ApiFactory) -> None:
    api = await api_factory([LLMResponse(text="a"), LLMResponse(text="b")])
    for goal in ("one", "two"):
        assert (await api.post("/v1/runs", json={"goal": goal}, headers=headers())).status_code == 201

    default = await api.get("/v1/runs", params={"agent": "default", "limit": 1}, headers=headers())
    other = await api.get("/v1/runs", params={"agent": "researcher"}, headers=headers())
    bad = await api.get("/v1/runs", params={"agent": "1 bad"}, headers=headers())

    assert [run["goal"] for run in default.json()["runs"]] == ["two"]
    assert "agent=default" in default.json()["next"]
    following = await api.get(default.json()["next"], headers=headers())
    assert [run["goal"] for run in following.json()["runs"]] == ["one"]
    assert other.json()["runs"] == []
    assert bad.status_code == 422
