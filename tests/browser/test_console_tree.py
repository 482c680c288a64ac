"""The console and run trees: an agent that calls another agent. The parent waits on its child run (a
`waiting` run, found by the status filter and followed live), its page lists the child with its agent
and status as it changes, and the child's page links back to its parent. The `console` fixture checks
that no request left the host and the console logged no error."""

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Watched, screenshot, wait_for_status
from tests.browser.goal_llm import RELEASE
from tests.browser.live_api import LiveApi
from tests.browser.test_console import WAIT_MS, sign_in, start

pytestmark = pytest.mark.browser

GOAL = "delegate the slow work to the helper"


def test_a_parent_lists_its_child_run_live_and_each_links_to_the_other(
    console: Watched, live_api: LiveApi, api: httpx.Client
) -> None:
    RELEASE.clear()  # the child's `slow` call holds: the parent waits on it meanwhile
    parent_id = start(api, GOAL, agent="lead")
    wait_for_status(api, parent_id, "waiting")
    [child] = api.get(f"/v1/runs/{parent_id}").json()["children"]
    wait_for_status(api, child["id"], "running")
    page = console.page
    sign_in(page, live_api)

    # the status filter knows `waiting`
    page.select_option("#filters select[name=status]", "waiting")
    page.click("#filters button[type=submit]")
    row = page.locator(f"tr[data-run='{parent_id}']")
    expect(row.locator(".status")).to_have_text("waiting", timeout=WAIT_MS)
    expect(row).to_contain_text("lead")
    row.locator("td.goal a").click()

    # the parent, waiting: its child listed with its agent, status and the step that called it
    expect(page.locator(".summary .status")).to_have_text("waiting", timeout=WAIT_MS)
    expect(page.locator("#waiting")).to_contain_text("Waiting on its child runs")
    expect(page.locator("#cancel")).to_be_visible()  # not ended: the page follows it
    listed = page.locator(f"#children li[data-child='{child['id']}']")
    expect(listed.locator("a.agent")).to_have_text("helper", timeout=WAIT_MS)
    expect(listed.locator(".status")).to_have_text("running")
    expect(listed).to_contain_text("called at step #1")
    screenshot(page, "console-run-tree")

    RELEASE.set()

    # live, no reload: the child ends, then the parent answers with what it said
    expect(listed.locator(".status")).to_have_text("succeeded", timeout=WAIT_MS)
    expect(page.locator(".summary .status")).to_have_text("succeeded", timeout=WAIT_MS)
    expect(page.locator("#answer")).to_have_text("Done: Done: released", timeout=WAIT_MS)
    expect(page.locator("#waiting")).to_be_empty()
    tree = api.get(f"/v1/runs/{parent_id}").json()["tree_usage"]
    expect(page.locator("#tree-tokens")).to_have_text(
        f"{tree['input_tokens']} in · {tree['output_tokens']} out", timeout=WAIT_MS
    )

    # through to the child, and back to its parent
    listed.locator("a.agent").click()
    expect(page).to_have_url(f"{live_api.base_url}/console#/runs/{child['id']}")
    expect(page.locator(".summary h1")).to_have_text("slow work for the lead", timeout=WAIT_MS)
    expect(page.locator(".summary")).to_contain_text("helper")
    expect(page.locator("#answer")).to_have_text("Done: released")
    expect(page.locator("#children")).to_have_count(0)
    page.locator("#parent-link").click()
    expect(page).to_have_url(f"{live_api.base_url}/console#/runs/{parent_id}")
    expect(page.locator(".summary h1")).to_have_text(GOAL, timeout=WAIT_MS)
    expect(page.locator(f"#children li[data-child='{child['id']}'] .status")).to_have_text("succeeded")
