"""On real servers: /health, outages as 503s, a database error that is no outage, and runs whose executor died."""

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres import create_database, drop_database
from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.domain.messages import LLMResponse
from tests.http_fixtures import ApiFactory, headers
from tests.state_fixtures import StateServers, unique_name

pytestmark = pytest.mark.integration


async def test_health_reports_each_dependency_without_a_key(api_factory: ApiFactory) -> None:
    api = await api_factory([])

    response = await api.get("/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}


async def test_health_is_503_when_postgres_is_down(api_factory: ApiFactory, unused_tcp_port: int) -> None:
    # nothing listens on this loopback port, as if the database had gone away
    api = await api_factory([], database_url=f"postgresql://postgres@127.0.0.1:{unused_tcp_port}/agentkit")

    response = await api.get("/health")

    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "checks": {"postgres": "down", "redis": "ok"}}


async def test_a_store_outage_is_a_503_with_retry_after_not_a_500(
    api_factory: ApiFactory, unused_tcp_port: int
) -> None:
    # nothing listens on this loopback port: PostgreSQL is down
    api = await api_factory([], database_url=f"postgresql://postgres@127.0.0.1:{unused_tcp_port}/agentkit")

    created = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())
    read = await api.get("/v1/runs/00000000-0000-0000-0000-000000000000", headers=headers())

    for response in (created, read):
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        assert response.json()["code"] == "store_unavailable"
        assert response.json()["detail"] == "PostgreSQL is unavailable (ConnectionRefusedError)"


async def test_a_redis_outage_does_not_stop_run_creation(api_factory: ApiFactory, unused_tcp_port: int) -> None:
    # nothing listens on this loopback port: Redis is down, so the rate limit is counted per process
    api = await api_factory([LLMResponse(text="done")], redis_url=f"redis://127.0.0.1:{unused_tcp_port}/0")

    response = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())

    assert response.status_code == 201
    assert response.json()["status"] == "succeeded"


async def test_a_database_error_that_is_not_an_outage_is_a_500_and_logged(
    api_factory: ApiFactory, state_servers: StateServers, capsys: pytest.CaptureFixture[str]
) -> None:
    # a database without AgentKit's tables: the query is wrong there (a bug of the deployment), not
    # an outage, and "try again later" would hide it
    name = unique_name("unmigrated")
    url = await create_database(state_servers.server_url, name)
    try:
        api = await api_factory([], database_url=url.render_as_string(hide_password=False))
        response = await api.get("/v1/runs/00000000-0000-0000-0000-000000000000", headers=headers())
    finally:
        await drop_database(state_servers.server_url, name)

    assert response.status_code == 500
    assert "retry-after" not in response.headers
    assert response.json()["code"] == "internal_error"
    assert "UndefinedTableError" not in response.text  # no internals on the wire...
    logged = capsys.readouterr().out
    assert "unhandled_error" in logged  # ...but in the log, with the stack
    assert "UndefinedTableError" in logged


async def _leave_running(pg_engine: AsyncEngine, run_id: str, *, attempt: int) -> None:
    """Make a run look left running by a process that died: running, its lease long gone."""
    async with pg_engine.begin() as conn:
        await conn.execute(
            update(runs_table)
            .where(runs_table.c.id == run_id)
            .values(
                status="running",
                finished_at=None,
                final_answer=None,
                attempt=attempt,
                expires_at=runs_table.c.created_at - timedelta(seconds=1),
            )
        )


async def _poll_until_not_running(api: Any, run_id: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for _ in range(40):
        seen = (await api.get(f"/v1/runs/{run_id}", headers=headers(), params={"wait": 0.1})).json()
        if seen["status"] != "running":
            break
    return seen


async def test_a_run_whose_executor_died_is_resumed_from_its_stored_steps(
    api_factory: ApiFactory, pg_engine: AsyncEngine
) -> None:
    api = await api_factory([LLMResponse(text="done")], run_lease_s=0.3)
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()
    await _leave_running(pg_engine, run["id"], attempt=1)

    resumed = await _poll_until_not_running(api, run["id"])

    # the stored response is the answer: the run ends with it, and the model is not asked again
    assert (resumed["status"], resumed["answer"]) == ("succeeded", "done")
    trace = (await api.get(f"/v1/runs/{run['id']}/trace", headers=headers())).json()
    assert [step["kind"] for step in trace["steps"]] == ["llm"]


async def test_a_run_whose_executors_died_max_run_attempts_times_expires(
    api_factory: ApiFactory, pg_engine: AsyncEngine
) -> None:
    api = await api_factory([LLMResponse(text="done")], run_lease_s=0.3, max_run_attempts=2)
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()
    await _leave_running(pg_engine, run["id"], attempt=2)

    expired = await _poll_until_not_running(api, run["id"])

    assert expired["status"] == "expired"
    assert expired["failure_reason"] == "worker_lost"
