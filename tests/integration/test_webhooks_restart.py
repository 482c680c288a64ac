"""Webhooks from real processes: a delivery outlives a kill -9 of `agentkit serve`; queue workers send theirs.

The receiver runs in a thread of its own (the test blocks on the server processes) and verifies each
signature with `standardwebhooks`; its first answer is a 500.
"""

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from tests.integration.serving import ServedProcess
from tests.webhook_receiver import WAIT_S, new_secret

pytestmark = pytest.mark.integration
KEY = "webhook-restart-key"
SECRET = new_secret()


class ThreadedReceiver:
    """Answers POSTs with `statuses` in turn (then 200); keeps (headers, verified) of each."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.received: list[tuple[dict[str, str], bool]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                try:
                    Webhook(SECRET).verify(body, headers)
                    verified = True
                except WebhookVerificationError:
                    verified = False
                outer.received.append((headers, verified))
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ThreadedReceiver":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[ThreadedReceiver]:
    with ThreadedReceiver([500]) as found:
        yield found


def deliveries(server: ServedProcess, run_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{server.base_url}/v1/runs/{run_id}/webhooks", headers={"X-API-Key": KEY}, timeout=10)
    assert response.status_code == 200
    found: list[dict[str, Any]] = response.json()["deliveries"]
    return found


def until(check: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {WAIT_S:g} s")


def test_a_pending_retry_is_sent_by_the_next_process_after_a_kill(
    server_env: dict[str, str], receiver: ThreadedReceiver
) -> None:
    env = {
        **server_env,
        "API_KEYS": KEY,
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_ALLOW_LOOPBACK": "true",
        # the retry falls due 3 to 6 s after the first attempt: after the kill
        "WEBHOOK_RETRY_FIRST_S": "6",
        "WEBHOOK_POLL_S": "0.2",
    }
    first = ServedProcess(env)
    try:
        first.wait_until_healthy()
        created = httpx.post(
            f"{first.base_url}/v1/runs",
            json={"goal": "6 * 7?", "callback_url": receiver.url},
            headers={"X-API-Key": KEY},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        [pending] = until(lambda: [d for d in deliveries(first, run_id) if d["attempts"]], "the first attempt")
        assert pending["status"] == "pending"
        assert [a["status_code"] for a in pending["attempts"]] == [500]
    finally:
        first.process.kill()  # kill -9: nothing is flushed, nothing handed over
        first.collect()
    killed_at = datetime.now(UTC)

    second = ServedProcess(env)
    try:
        second.wait_until_healthy()
        [delivered] = until(
            lambda: [d for d in deliveries(second, run_id) if d["status"] != "pending"], "the next process's retry"
        )
    finally:
        second.stop()

    assert delivered["status"] == "delivered"
    assert [a["status_code"] for a in delivered["attempts"]] == [500, 200]
    assert datetime.fromisoformat(delivered["attempts"][1]["at"]) > killed_at  # sent by the second process
    assert len(receiver.received) == 2
    (one, one_verified), (two, two_verified) = receiver.received
    assert one_verified
    assert two_verified
    assert one["webhook-id"] == two["webhook-id"] == delivered["id"]


def test_in_queue_mode_the_worker_that_ran_the_run_sends_its_webhook(
    server_env: dict[str, str], receiver: ThreadedReceiver
) -> None:
    receiver.statuses.clear()
    queue = {
        **server_env,
        "API_KEYS": KEY,
        "RUN_MODE": "queue",
        "RUN_QUEUE_NAME": server_env["REDIS_KEY_PREFIX"] + "runs",
    }
    # only the worker can sign: the API stores and sends nothing, so the webhook is the worker's
    worker_env = {**queue, "WEBHOOK_SECRET": SECRET, "WEBHOOK_ALLOW_LOOPBACK": "true", "WEBHOOK_URL": receiver.url}
    api = ServedProcess(queue)
    worker = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "worker"],
        env={**os.environ, **worker_env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        api.wait_until_healthy()
        created = httpx.post(f"{api.base_url}/v1/runs", json={"goal": "6 * 7?"}, headers={"X-API-Key": KEY}, timeout=30)
        assert created.status_code in (201, 202), created.text
        run_id = created.json()["id"]

        [delivered] = until(
            lambda: [d for d in deliveries(api, run_id) if d["status"] == "delivered"], "the worker's webhook"
        )
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
        api.stop()

    assert delivered["event"] == "run.succeeded"
    [(headers, verified)] = receiver.received
    assert verified
    assert headers["webhook-id"] == delivered["id"]
