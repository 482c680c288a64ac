"""Browser tests: Playwright drives Debian's Chromium (the `chromium` package) against the app on loopback.

One browser and one server for the session; each test gets a fresh browser context. Every page a test
uses records its requests and console: at the end, every URL must be on loopback (anything else is
also aborted) and the console must hold no error. Without Chromium the tests are skipped, saying so.
"""

import functools
import http.server
import os
import shutil
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Playwright, Route, sync_playwright

from tests.browser.goal_llm import GoalScriptedLLM, delete_file, hostile, slow
from tests.browser.live_api import LiveApi
from tests.sample_tools import add

KEY = "console-key-" + "k" * 20
CHROMIUM = shutil.which("chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
LOOPBACK = {"127.0.0.1", "::1", "[::1]", "localhost"}
# Where the tests save screenshots of the main pages when set (the README's come from here).
SCREENSHOTS = os.environ.get("AGENTKIT_SCREENSHOTS")


def is_loopback(url: str) -> bool:
    """Whether a request stays on this machine (data: URLs never leave the page)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in {"data", "blob", "about"} or (parts.hostname or "") in LOOPBACK


class StaticPages:
    """A folder of files served over HTTP on a loopback port of its own: a page of another origin."""

    def __init__(self, folder: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.folder = folder
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""


@pytest.fixture(scope="session")
def other_origins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StaticPages, StaticPages]]:
    """Two pages of other origins: the first is in CORS_ORIGINS, the second is not."""
    allowed = StaticPages(tmp_path_factory.mktemp("allowed-origin"))
    refused = StaticPages(tmp_path_factory.mktemp("refused-origin"))
    yield allowed, refused
    allowed.close()
    refused.close()


@pytest.fixture(scope="session")
def live_api(other_origins: tuple[StaticPages, StaticPages]) -> Iterator[LiveApi]:
    """The app on a loopback port: a goal-scripted model, test tools, one key, CORS for one origin."""
    env = {"API_KEYS": KEY, "CORS_ORIGINS": other_origins[0].origin, "RATE_LIMIT_PER_MIN": "1000"}
    server = LiveApi(env, GoalScriptedLLM(), [add, hostile, slow, delete_file]).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver (no browser of its own is downloaded: the system's Chromium is used)."""
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine: install Debian's `chromium` package (.ci/run does in CI)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the whole session."""
    launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
    yield launched
    launched.close()


@dataclass
class Watched:
    """A page and what it did: every request's URL, the ones refused as leaving the host, console errors."""

    page: Page
    requests: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def watch(browser: Browser, *, intercept: bool = True) -> Watched:
    """A new page in a fresh context whose requests and console are recorded (non-loopback ones aborted).

    `intercept=False` records requests without routing them: while Playwright routes a context's requests
    it answers CORS preflights itself, so the CORS tests must leave the server's answer to the browser.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    watched = Watched(page=context.new_page())
    if not intercept:
        context.on("request", lambda request: watched.requests.append(request.url))

    def guard(route: Route) -> None:
        url = route.request.url
        watched.requests.append(url)
        if is_loopback(url):
            route.continue_()
        else:
            watched.outside.append(url)
            route.abort()

    if intercept:
        context.route("**/*", guard)

    def console_message(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(message.text)

    def uncaught(error: Error) -> None:
        watched.errors.append(f"uncaught: {error}")

    watched.page.on("console", console_message)
    watched.page.on("pageerror", uncaught)
    return watched


@pytest.fixture
def console(browser: Browser, live_api: LiveApi) -> Iterator[Watched]:
    """A page for the console; afterwards: no console error, no request off this host."""
    watched = watch(browser)
    yield watched
    watched.page.context.close()
    assert watched.errors == [], f"console errors: {watched.errors}"
    assert watched.outside == [], f"requests off the host: {watched.outside}"
    assert watched.requests, "the page made no request at all"
    assert all(is_loopback(url) for url in watched.requests)


@pytest.fixture
def api(live_api: LiveApi) -> Iterator[httpx.Client]:
    """An API client with the key, for what the test sets up beside the browser."""
    with httpx.Client(base_url=live_api.base_url, headers={"X-API-Key": KEY}, timeout=30) as client:
        yield client


def wait_for_status(api: httpx.Client, run_id: str, status: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """The run, once it reached `status` (checked often; generous for a loaded machine)."""
    deadline = time.monotonic() + timeout_s
    while True:
        run: dict[str, Any] = api.get(f"/v1/runs/{run_id}").json()
        if run["status"] == status:
            return run
        assert time.monotonic() < deadline, f"run {run_id} is {run['status']}, never {status}"
        time.sleep(0.05)


def screenshot(page: Page, name: str, *, full_page: bool = False) -> None:
    """Save a screenshot of the page under AGENTKIT_SCREENSHOTS, when it is set (the README's come from here)."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=full_page)


@pytest.fixture
def browser_page(browser: Browser, live_api: LiveApi) -> Iterator[Page]:
    """A page whose requests are not routed, for tests where the browser is expected to log an error (a
    refused key, CORS); still, every request it made must have stayed on this host."""
    watched = watch(browser, intercept=False)
    yield watched.page
    watched.page.context.close()
    assert watched.requests, "the page made no request at all"
    assert [url for url in watched.requests if not is_loopback(url)] == []
