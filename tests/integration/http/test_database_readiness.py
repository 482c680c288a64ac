"""On real servers: a database that is not there, or refuses this process, is an outage on every route; /health
tells a schema the code does not match from a migrated one."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import create_database, create_engine, drop_database, with_database
from tests.http_fixtures import ApiFactory, headers
from tests.state_fixtures import StateServers, create_migrated_database, unique_name

pytestmark = pytest.mark.integration

NO_RUN = "00000000-0000-0000-0000-000000000000"
# Every route that reads or writes PostgreSQL, with a body it accepts.
STORE_ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/runs", {"goal": "x"}),
    ("GET", "/v1/runs", None),
    ("GET", f"/v1/runs/{NO_RUN}", None),
    ("GET", f"/v1/runs/{NO_RUN}/trace", None),
    ("GET", f"/v1/runs/{NO_RUN}/events", None),
    ("GET", f"/v1/runs/{NO_RUN}/webhooks", None),
    ("POST", f"/v1/runs/{NO_RUN}/cancel", None),
    ("POST", f"/v1/runs/{NO_RUN}/approvals", {"call_id": "c1", "digest": "d", "decision": "approve"}),
    ("POST", f"/v1/runs/{NO_RUN}/tool_outputs", {"call_id": "c1", "output": "x"}),
    ("POST", "/v1/chat", {"message": "hello"}),
]


@pytest.fixture
async def scratch_database(state_servers: StateServers) -> AsyncIterator[tuple[URL, str]]:
    """A name for a database of this test's own on the server (dropped afterwards if the test made it)."""
    name = unique_name("readiness")
    yield with_database(state_servers.server_url, name), name
    await drop_database(state_servers.server_url, name)


@pytest.mark.parametrize(("method", "path", "body"), STORE_ROUTES, ids=[f"{m} {p}" for m, p, _ in STORE_ROUTES])
async def test_a_database_that_does_not_exist_is_a_503_with_retry_after_on_every_route(
    api_factory: ApiFactory,
    scratch_database: tuple[URL, str],
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    # DATABASE_URL names a database the server does not have (dropped, being restored, a typo):
    # PostgreSQL answers every connection with 3D000 invalid_catalog_name
    url, _ = scratch_database
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))

    response = await api.request(method, path, json=body, headers=headers())

    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "5"
    assert response.json()["code"] == "store_unavailable"
    assert response.json()["detail"] == "PostgreSQL is unavailable (InvalidCatalogNameError)"


async def test_credentials_the_server_refuses_are_a_503_with_retry_after(
    api_factory: ApiFactory, state_servers: StateServers
) -> None:
    # a role the server does not know (dropped, or renamed while its secret was rotated): 28000
    url = state_servers.database_url.set(username=unique_name("no_such_role"), password=None)
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))

    created = await api.post("/v1/runs", json={"goal": "x"}, headers=headers())
    health = await api.get("/health")

    assert created.status_code == 503, created.text
    assert created.headers["retry-after"] == "5"
    assert created.json()["detail"] == "PostgreSQL is unavailable (InvalidAuthorizationSpecificationError)"
    assert (health.status_code, health.json()["checks"]["postgres"]) == (503, "down")


async def test_health_is_503_postgres_down_when_the_database_does_not_exist(
    api_factory: ApiFactory, scratch_database: tuple[URL, str]
) -> None:
    url, _ = scratch_database
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))

    response = await api.get("/health")

    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "checks": {"postgres": "down", "redis": "ok"}}


async def test_health_reports_an_unmigrated_database_as_not_ready(
    api_factory: ApiFactory, state_servers: StateServers, scratch_database: tuple[URL, str]
) -> None:
    _, name = scratch_database
    url = await create_database(state_servers.server_url, name)  # empty: `agentkit migrate` never ran
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))

    response = await api.get("/health")

    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "checks": {"postgres": "schema_behind", "redis": "ok"}}


async def _record_revision(url: URL, revision: str) -> None:
    engine = create_engine(url, pool_size=1, max_overflow=0)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :revision"), {"revision": revision})
    finally:
        await engine.dispose()


async def test_health_reports_a_schema_behind_the_code_as_not_ready(
    api_factory: ApiFactory, state_servers: StateServers, scratch_database: tuple[URL, str]
) -> None:
    _, name = scratch_database
    url = await create_migrated_database(state_servers.server_url, name)
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))
    assert (await api.get("/health")).status_code == 200  # migrated to the code's head: ready

    await _record_revision(url, "0001")  # as an old backup restored under the running process leaves it
    response = await api.get("/health")

    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "checks": {"postgres": "schema_behind", "redis": "ok"}}


async def test_a_schema_a_newer_release_migrated_keeps_a_running_process_ready(
    api_factory: ApiFactory, state_servers: StateServers, scratch_database: tuple[URL, str]
) -> None:
    # a rolling upgrade: the new release's first process migrated, this one serves until it is replaced
    _, name = scratch_database
    url = await create_migrated_database(state_servers.server_url, name)
    api = await api_factory([], database_url=url.render_as_string(hide_password=False))

    await _record_revision(url, "9999_from_a_newer_release")
    response = await api.get("/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
