"""`agentkit serve` as a process on in-memory state: one JSON log format, and /docs from the app alone."""

import json
import re

import httpx

from tests.integration.serving import ServedProcess


def test_every_line_a_served_process_prints_is_json_uvicorns_included() -> None:
    server = ServedProcess({"STATE_BACKEND": "memory", "LOG_FORMAT": "json", "LOG_LEVEL": "INFO", "API_KEYS": ""})
    try:
        server.wait_until_healthy()
    finally:
        output = server.stop()

    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    assert all({"event", "level", "timestamp"} <= set(line) for line in lines)
    uvicorn_events = [line["event"] for line in lines if line.get("logger", "").startswith("uvicorn")]
    assert any(event.startswith("Uvicorn running on") for event in uvicorn_events)
    assert any(event == "Application startup complete." for event in uvicorn_events)
    assert "serving" in [line["event"] for line in lines]


def test_the_served_docs_page_loads_its_assets_from_the_server() -> None:
    server = ServedProcess({"STATE_BACKEND": "memory", "API_KEYS": ""})
    try:
        server.wait_until_healthy()
        page = httpx.get(f"{server.base_url}/docs", timeout=30)
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text)
        assets = [httpx.get(f"{server.base_url}{url}", timeout=30) for url in urls]
    finally:
        server.stop()

    assert page.status_code == 200
    assert len(urls) == 4  # the bundle, the preset, the stylesheet, the icon
    assert all(url.startswith("/docs/assets/") for url in urls)
    assert [asset.status_code for asset in assets] == [200] * len(urls)
