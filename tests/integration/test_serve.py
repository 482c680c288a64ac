"""`agentkit serve` as a process: it answers runs, and SIGTERM stops it within its grace period."""

import asyncio
import contextlib
import json
import signal
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres.tables import runs
from tests.integration.serving import ServedProcess

pytestmark = pytest.mark.integration

KEY = {"X-API-Key": "serve-test-key"}


def test_serve_answers_runs_and_stops_cleanly(server_env: dict[str, str]) -> None:
    server = ServedProcess({**server_env, "API_KEYS": "serve-test-key"})
    try:
        server.wait_until_healthy()
        created = httpx.post(f"{server.base_url}/v1/runs", json={"goal": "6 * 7"}, headers=KEY, timeout=60)
        assert created.status_code == 201
        assert created.json()["answer"] == "42"
    finally:
        output = server.stop()
    # uvicorn shuts down gracefully, then re-raises the signal so the exit status tells why it stopped
    assert server.process.returncode == -signal.SIGTERM
    assert "Traceback" not in output


async def count_running(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        rows = (await conn.execute(select(runs.c.status))).scalars().all()
    return sum(status == "running" for status in rows)


async def test_sigterm_answers_waiting_requests_at_once_and_exits_within_the_grace(
    server_env: dict[str, str], pg_engine: AsyncEngine, tmp_path: Path
) -> None:
    grace_s = 2.0
    script = tmp_path / "hold.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "hold"}]}, {"text": "never"}]))
    server = ServedProcess(
        {
            **server_env,
            "API_KEYS": "serve-test-key",
            "LLM_SCRIPT": str(script),
            "AGENTKIT_TOOL_MODULES": "tests.blocking_tools",
            "SHUTDOWN_GRACE_S": str(grace_s),
            "RESPONSE_TIMEOUT_S": "120",
        }
    )
    late: httpx.Response | None = None
    try:
        await asyncio.to_thread(server.wait_until_healthy)
        async with httpx.AsyncClient(base_url=server.base_url, headers=KEY, timeout=300) as client:
            respond_async = {**KEY, "Prefer": "respond-async"}
            background = [await client.post("/v1/runs", json={"goal": "hold"}, headers=respond_async) for _ in range(3)]
            waiting = [asyncio.create_task(client.post("/v1/runs", json={"goal": "hold"})) for _ in range(3)]
            waiting += [asyncio.create_task(client.get(f"/v1/runs/{r.json()['id']}?wait=60")) for r in background]
            deadline = time.monotonic() + 120
            while await count_running(pg_engine) < 6:
                assert time.monotonic() < deadline, "the six runs never started"
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # the long polls and sync POSTs are now waiting inside the server

            server.terminate()
            stopped_at = time.monotonic()
            answered = await asyncio.wait_for(asyncio.gather(*waiting), 120)
            answered_after_s = time.monotonic() - stopped_at
            with contextlib.suppress(httpx.TransportError):  # a closed listener refuses at the door: fine too
                late = await client.post("/v1/runs", json={"goal": "too late"})
    finally:
        output = await asyncio.to_thread(server.stop)
    exited_after_s = time.monotonic() - stopped_at

    assert [response.status_code for response in answered] == [202, 202, 202, 200, 200, 200]
    assert all(response.json()["status"] == "running" for response in answered)
    assert answered_after_s < grace_s  # answered at once, not after the grace or the wait
    assert late is None or (late.status_code == 503 and "retry-after" in late.headers)
    assert exited_after_s < grace_s + 5
    assert "Traceback" not in output
    async with pg_engine.connect() as conn:
        final = (await conn.execute(select(runs.c.status, runs.c.expires_at <= func.now(), runs.c.calling))).all()
    assert len(final) == 6
    # handed back: still running, the lease given up (the next executor takes them at once), and
    # each knows its `hold` call had started (not idempotent: a resume will not run it twice)
    assert {(status, lapsed) for status, lapsed, _ in final} == {("running", True)}
    assert all(calling is not None for _, _, calling in final)
