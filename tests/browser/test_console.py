"""The console in a real browser: sign in, list runs, read a run and its prompts, watch one live, answer
what waits, and show a hostile tool output as text. Every test also checks (in the `console` fixture)
that no request left the host and the console logged no error."""

import secrets

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import Error as PlaywrightError

from tests.browser.conftest import KEY, Watched, screenshot, wait_for_status, watch
from tests.browser.goal_llm import HOSTILE, RELEASE, STREAMED, WRITE
from tests.browser.live_api import LiveApi

pytestmark = pytest.mark.browser

# Generous: a loaded 2-core machine; each wait ends as soon as the page shows what it waits for.
WAIT_MS = 30_000


def sign_in(page: Page, live_api: LiveApi, view: str = "#/runs") -> None:
    """Open the console and give it the key, as a person does."""
    page.goto(f"{live_api.base_url}/console{view}")
    page.fill("#api-key", KEY)
    page.click("#login button[type=submit]")
    expect(page.locator("#nav")).to_be_visible(timeout=WAIT_MS)


def start(api: httpx.Client, goal: str, **body: object) -> str:
    """Start a run without waiting for it; its id."""
    response = api.post("/v1/runs", json={"goal": goal, **body}, headers={"Prefer": "respond-async"})
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    return run_id


def test_sign_in_keeps_the_key_in_the_tab_only_and_lists_the_runs(
    console: Watched, live_api: LiveApi, api: httpx.Client
) -> None:
    run_id = start(api, "add two and three")
    wait_for_status(api, run_id, "succeeded")
    page = console.page
    sign_in(page, live_api)

    row = page.locator(f"tr[data-run='{run_id}']")
    expect(row).to_contain_text("add two and three", timeout=WAIT_MS)
    expect(row).to_contain_text("succeeded")
    assert page.evaluate("sessionStorage.getItem('agentkit.apiKey')") == KEY
    assert page.evaluate("localStorage.length") == 0
    assert KEY not in page.url
    assert all(KEY not in url for url in console.requests)


def test_a_run_shows_its_steps_and_the_exact_prompt_of_each_llm_call(
    console: Watched, live_api: LiveApi, api: httpx.Client
) -> None:
    run_id = start(api, "add two and three, then say the sum")
    wait_for_status(api, run_id, "succeeded")
    page = console.page
    sign_in(page, live_api, f"#/runs/{run_id}")

    steps = page.locator("li.step")
    expect(steps).to_have_count(3, timeout=WAIT_MS)
    first, tool, last = steps.nth(0), steps.nth(1), steps.nth(2)
    expect(first).to_contain_text("goal-script-1")
    expect(first).to_contain_text("tool_calls")
    expect(first).to_contain_text("→ add")
    expect(tool).to_contain_text("add")
    expect(tool.locator(".tool-output")).to_have_text("5.0")
    expect(last).to_contain_text("Done: 5.0")
    expect(page.locator("#answer")).to_have_text("Done: 5.0")

    last.locator("summary", has_text="Prompt sent").click()
    prompt = last.locator(".prompt")
    expect(prompt.locator(".message")).to_have_count(4, timeout=WAIT_MS)  # system, goal, the call, its result
    expect(prompt.locator(".role-user")).to_contain_text("add two and three, then say the sum")
    expect(prompt.locator(".role-tool")).to_contain_text("5.0")
    expect(prompt.locator(".tool-schema summary").first).to_be_visible()
    screenshot(page, "console-run", full_page=True)


def test_a_new_run_appears_and_its_steps_come_live(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    RELEASE.clear()
    page = console.page
    sign_in(page, live_api)
    expect(page.locator("#runs")).to_be_attached(timeout=WAIT_MS)

    run_id = start(api, "slow work, watched live")
    row = page.locator(f"tr[data-run='{run_id}']")
    expect(row).to_be_visible(timeout=WAIT_MS)  # no reload: the list asks for new runs itself
    row.locator("td.goal a").click()

    # the model's first step is on the page while its tool call still runs
    expect(page.locator("li.step[data-kind=llm]")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".summary .status")).to_have_text("running")
    expect(page.locator("li.step[data-kind=tool]")).to_have_count(0)

    RELEASE.set()
    expect(page.locator("li.step[data-kind=tool]")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("#answer")).to_have_text("Done: released", timeout=WAIT_MS)
    expect(page.locator(".summary .status")).to_have_text("succeeded")
    expect(page.locator("li.step")).to_have_count(3)


def test_status_changes_appear_in_the_list(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    RELEASE.clear()
    run_id = start(api, "slow work, seen from the list")
    wait_for_status(api, run_id, "running")
    page = console.page
    sign_in(page, live_api)
    row = page.locator(f"tr[data-run='{run_id}']")
    expect(row.locator(".status")).to_have_text("running", timeout=WAIT_MS)

    RELEASE.set()

    expect(row.locator(".status")).to_have_text("succeeded", timeout=WAIT_MS)  # followed: no reload


def test_calls_of_one_turn_that_ran_at_once_overlap_on_the_timeline(
    console: Watched, live_api: LiveApi, api: httpx.Client
) -> None:
    run_id = start(api, "pair of naps")
    wait_for_status(api, run_id, "succeeded")
    page = console.page
    sign_in(page, live_api, f"#/runs/{run_id}")

    bars = page.locator("li.step[data-kind=tool] .bar")
    expect(bars).to_have_count(2, timeout=WAIT_MS)
    first, second = (bars.nth(n).bounding_box() for n in range(2))
    assert first is not None
    assert second is not None
    # each bar spans its call's time on the run's axis: the two spans share most of their width
    shared = min(first["x"] + first["width"], second["x"] + second["width"]) - max(first["x"], second["x"])
    assert shared > 0.5 * min(first["width"], second["width"])
    expect(page.locator("li.step[data-kind=tool]").first).to_contain_text("slept 0.4")


def test_the_models_text_appears_as_it_is_written(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    RELEASE.clear()
    WRITE.clear()
    run_id = start(api, "stream the answer")
    page = console.page
    sign_in(page, live_api, f"#/runs/{run_id}")
    expect(page.locator("li.step[data-kind=llm]")).to_have_count(1, timeout=WAIT_MS)  # its tool call waits
    # a run streams its model's answers while someone follows it: the page does, once its events come
    expect(page.locator("#live[data-following]")).to_be_attached(timeout=WAIT_MS)

    RELEASE.set()  # the model's next answer is written while the page follows the run
    expect(page.locator("pre.writing")).to_have_text(STREAMED[0], timeout=WAIT_MS)
    expect(page.locator("li.step[data-kind=llm]")).to_have_count(1)  # not a step yet: fragments only

    WRITE.set()
    expect(page.locator("#answer")).to_have_text("".join(STREAMED), timeout=WAIT_MS)
    expect(page.locator("li.step[data-kind=llm]")).to_have_count(2)
    expect(page.locator("pre.writing")).to_have_count(0)


def test_filters_and_older_pages(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    session = "paging-" + secrets.token_hex(3)
    made = [start(api, f"add page {n}", session_id=session) for n in range(27)]
    for run_id in made:
        wait_for_status(api, run_id, "succeeded")
    page = console.page
    sign_in(page, live_api)

    page.fill("#filters input[name=session_id]", session)
    page.click("#filters button[type=submit]")
    rows = page.locator("#runs tr[data-run]")
    expect(rows).to_have_count(25, timeout=WAIT_MS)
    expect(rows.first).to_contain_text("add page 26")
    page.click("#more")
    expect(rows).to_have_count(27, timeout=WAIT_MS)
    expect(rows.last).to_contain_text("add page 0")
    expect(page.locator("#more")).to_be_hidden()

    page.select_option("#filters select[name=status]", "failed")
    page.click("#filters button[type=submit]")
    expect(rows).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator(".list-status")).to_have_text("No runs match.")


def test_approving_a_paused_call_lets_the_run_succeed(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    run_id = start(api, "delete the old notes", approval_required=["delete_file"])
    page = console.page
    sign_in(page, live_api, f"#/runs/{run_id}")

    call = page.locator("#waiting .call[data-call='call-delete_file']")
    expect(call).to_contain_text("delete_file", timeout=WAIT_MS)
    expect(call).to_contain_text("notes.txt")
    expect(page.locator(".summary .status")).to_have_text("requires action")
    screenshot(page, "console-approval")
    call.locator("button.approve").click()

    expect(page.locator(".summary .status")).to_have_text("succeeded", timeout=WAIT_MS)
    expect(page.locator("#answer")).to_have_text("Done: deleted notes.txt")
    expect(page.locator("#waiting")).to_be_empty()


def test_rejecting_from_the_inbox_gives_the_model_the_reason(
    console: Watched, live_api: LiveApi, api: httpx.Client
) -> None:
    run_id = start(api, "delete everything", approval_required=["delete_file"])
    wait_for_status(api, run_id, "requires_action")
    page = console.page
    sign_in(page, live_api, "#/inbox")

    waiting = page.locator(f"#inbox [data-run='{run_id}']")
    expect(waiting).to_contain_text("delete everything", timeout=WAIT_MS)
    screenshot(page, "console-inbox")
    waiting.locator("input.reason").fill("not the notes <b>please</b>")
    waiting.locator("button.reject").click()
    expect(page.locator(f"#inbox [data-run='{run_id}']")).to_have_count(0, timeout=WAIT_MS)

    run = wait_for_status(api, run_id, "succeeded")
    assert "not the notes <b>please</b>" in run["answer"]
    page.goto(f"{live_api.base_url}/console#/runs/{run_id}")
    expect(page.locator("li.step[data-kind=tool] .tool-error")).to_contain_text(
        "not the notes <b>please</b>", timeout=WAIT_MS
    )


def test_a_client_tools_output_is_sent_from_the_inbox(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    client_tool = {"description": "Ask the person at the browser.", "parameters": {"type": "object"}}
    run_id = start(api, "ask which files", client_tools={"ask_user": client_tool})
    wait_for_status(api, run_id, "requires_action")
    page = console.page
    sign_in(page, live_api, "#/inbox")

    waiting = page.locator(f"#inbox [data-run='{run_id}']")
    expect(waiting).to_contain_text("which files?", timeout=WAIT_MS)
    waiting.locator("textarea.output").fill('{"files": ["a.txt"]}')
    waiting.locator("button.send-output").click()

    expect(page.locator(f"#inbox [data-run='{run_id}']")).to_have_count(0, timeout=WAIT_MS)
    assert wait_for_status(api, run_id, "succeeded")["answer"] == 'Done: {"files":["a.txt"]}'


def test_a_hostile_tool_output_is_shown_as_text(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    run_id = start(api, "hostile output, please")
    wait_for_status(api, run_id, "succeeded")
    page = console.page
    sign_in(page, live_api, f"#/runs/{run_id}")

    expect(page.locator("li.step[data-kind=tool] .tool-output")).to_have_text(HOSTILE, timeout=WAIT_MS)
    expect(page.locator("#answer")).to_have_text(f"Done: {HOSTILE}")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img").count() == 0


def test_agents_tools_and_the_run_form(console: Watched, live_api: LiveApi, api: httpx.Client) -> None:
    page = console.page
    sign_in(page, live_api, "#/agents")
    expect(page.locator("[data-agent=default]")).to_contain_text("goal-script-1", timeout=WAIT_MS)
    page.click("nav a[data-view=tools]")
    expect(page.locator("[data-tool=delete_file]")).to_contain_text("asks a person first", timeout=WAIT_MS)

    page.click("nav a[data-view=new]")
    page.fill("#goal", "add from the form")
    page.fill("#session", "console-session-1")
    screenshot(page, "console-new-run")
    page.click("#run-form button[type=submit]")
    expect(page.locator(".summary .status")).to_have_text("succeeded", timeout=WAIT_MS)
    expect(page.locator(".summary")).to_contain_text("console-session-1")
    runs = api.get("/v1/runs", params={"session_id": "console-session-1"}).json()["runs"]
    assert [run["goal"] for run in runs] == ["add from the form"]

    page.click("nav a[data-view=runs]")
    expect(page.locator(f"tr[data-run='{runs[0]['id']}']")).to_contain_text("succeeded", timeout=WAIT_MS)
    screenshot(page, "console-runs")


def test_a_wrong_key_is_refused_and_not_kept(browser_page: Page, live_api: LiveApi) -> None:
    browser_page.goto(f"{live_api.base_url}/console")
    browser_page.fill("#api-key", "not-a-key")
    browser_page.click("#login button[type=submit]")
    expect(browser_page.locator("#login .error")).to_have_text("This key is not valid here.", timeout=WAIT_MS)
    assert browser_page.evaluate("sessionStorage.length") == 0


def test_the_tests_browser_reaches_no_other_host(browser: Browser) -> None:
    watched = watch(browser)
    try:
        with pytest.raises(PlaywrightError, match="ERR_PROXY_CONNECTION_FAILED"):
            watched.page.goto("http://example.com/", timeout=WAIT_MS)
    finally:
        watched.page.context.close()
    assert watched.outside == ["http://example.com/"]  # recorded, and refused
