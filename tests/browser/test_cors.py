"""CORS in a real browser: a page served from another loopback port calls the API with its key.

The server lists one of two such origins in CORS_ORIGINS: the browser's preflight is answered and the
page reads the answer (and the exposed Location); the other origin's page is refused by the browser.
"""

import json
import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import KEY, StaticPages
from tests.browser.live_api import LiveApi

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module" src="/call.js"></script></head><body><p id="out">waiting</p></body></html>"""
# The custom header (and the JSON body) make this a non-simple request: the browser sends a preflight.
SCRIPT = """
const out = document.getElementById("out");
try {
  const response = await fetch(API + "/v1/runs", {
    method: "POST",
    headers: {"X-API-Key": KEY, "Content-Type": "application/json"},
    body: JSON.stringify({goal: GOAL}),
  });
  const run = await response.json();
  out.textContent = `${response.status} ${run.status} ${response.headers.get("Location")}`;
} catch (error) {
  out.textContent = `refused: ${error.name}`;
}
"""


def serve_caller(pages: StaticPages, live_api: LiveApi, goal: str) -> str:
    """The caller page on `pages`' origin; it starts a run on `goal`."""
    (pages.folder / "index.html").write_text(PAGE)
    constants = "".join(
        f"const {name} = {json.dumps(value)};\n"
        for name, value in (("API", live_api.base_url), ("KEY", KEY), ("GOAL", goal))
    )
    (pages.folder / "call.js").write_text(constants + SCRIPT)
    return f"{pages.origin}/index.html"


def test_a_page_of_a_listed_origin_calls_the_api(
    browser_page: Page, live_api: LiveApi, other_origins: tuple[StaticPages, StaticPages]
) -> None:
    browser_page.goto(serve_caller(other_origins[0], live_api, "add across origins"))

    # the run, and the Location header the API exposes to the page
    expect(browser_page.locator("#out")).to_have_text(
        re.compile(r"^201 succeeded /v1/runs/[0-9a-f-]{36}$"), timeout=WAIT_MS
    )


def test_a_page_of_another_origin_is_refused_by_the_browser(
    browser_page: Page, live_api: LiveApi, other_origins: tuple[StaticPages, StaticPages], api: httpx.Client
) -> None:
    browser_page.goto(serve_caller(other_origins[1], live_api, "add from a stranger"))

    expect(browser_page.locator("#out")).to_have_text("refused: TypeError", timeout=WAIT_MS)
    # the preflight was refused, so the POST was never sent
    assert "add from a stranger" not in [run["goal"] for run in api.get("/v1/runs").json()["runs"]]
