"""Browser tests: Playwright drives Debian's Chromium (the `chromium` package) against the app on loopback.

One server for the session, one browser a module; each test gets a fresh browser context. Every page
records its requests and console: at the end, every URL must be on loopback (the browser's proxy
refuses any other host) and the console must hold no error. Without Chromium the tests are skipped,
saying so.
"""

import functools
import http.server
import os
import shutil
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Error, Page, Playwright, sync_playwright

from tests.browser.goal_llm import TREE_AGENTS, GoalScriptedLLM, delete_file, hostile, nap, slow
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


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


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
def live_api(
    other_origins: tuple[StaticPages, StaticPages], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveApi]:
    """The app on a loopback port: a goal-scripted model, test tools, one key, CORS for one origin, and
    two agents besides `default` (one calls the other: run trees)."""
    agents = tmp_path_factory.mktemp("agents") / "agents.toml"
    agents.write_text(TREE_AGENTS, encoding="utf-8")
    env = {
        "API_KEYS": KEY,
        "CORS_ORIGINS": other_origins[0].origin,
        "RATE_LIMIT_PER_MIN": "1000",
        "AGENTS_FILE": str(agents),
    }
    server = LiveApi(env, GoalScriptedLLM(), [add, hostile, slow, delete_file, nap]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver (no browser of its own is downloaded: the system's Chromium is used).

    A module's, not the session's: the sync API runs an event loop in the main thread while it is
    open, and the async tests of later modules need that thread's loop free.
    """
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine: install Debian's `chromium` package (.ci/run does in CI)")
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for a module's tests.

    Its proxy is a closed loopback port: a request to any other host fails (and is recorded, and logs a
    console error, both of which fail the test), while loopback addresses bypass the proxy.
    """
    # Chromium's own flag, not Playwright's `proxy` option, which would send loopback through it too
    refuse_others = f"--proxy-server=http://127.0.0.1:{closed_port()}"
    launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=[*LAUNCH_ARGS, refuse_others])
    yield launched
    launched.close()


@dataclass
class Watched:
    """A page and what it did: every request's URL, and its console errors."""

    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def outside(self) -> list[str]:
        """The requests that were not to this host (the browser's proxy refuses them: see `browser`)."""
        return [url for url in self.requests if not is_loopback(url)]


def watch(browser: Browser) -> Watched:
    """A new page in a fresh context whose requests and console are recorded.

    Recorded, not routed: while Playwright routes a context's requests it holds each response until it
    is complete (a stream of events arrives only when the run ends) and answers CORS preflights itself.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    watched = Watched(page=context.new_page())
    context.on("request", lambda request: watched.requests.append(request.url))

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
    """A page for tests where the browser is expected to log an error (a refused key, CORS); still, every
    request it made must have stayed on this host."""
    watched = watch(browser)
    yield watched.page
    watched.page.context.close()
    assert watched.requests, "the page made no request at all"
    assert watched.outside == [], f"requests off the host: {watched.outside}"
