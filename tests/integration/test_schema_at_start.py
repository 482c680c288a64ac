"""`agentkit serve` and `agentkit worker` as processes on a database whose schema is not this release's.

Each test makes a database of its own on the machine's PostgreSQL (a unique name, dropped at the end):
empty, as `createdb` leaves it, or migrated and then marked with another release's revision. A
service refuses to start on it with one line saying what to do, or, with MIGRATE_ON_START, migrates
it and serves.
"""

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL

from agentkit.adapters.postgres import create_database, create_engine, drop_database, find_migrations, with_database
from tests.integration.serving import START_TIMEOUT_S, ServedProcess, free_port
from tests.state_fixtures import StateServers, create_migrated_database, unique_name

pytestmark = pytest.mark.integration

KEY = {"X-API-Key": "schema-test-key"}
MIGRATE = "run `agentkit migrate`, or set MIGRATE_ON_START=true to migrate at start-up"


def head_revision() -> str:
    """The newest revision of this release's migrations (the file names start with it)."""
    return max(path.name.partition("_")[0] for path in (find_migrations() / "versions").glob("[0-9]*.py"))


@pytest.fixture
async def database(state_servers: StateServers) -> AsyncIterator[tuple[URL, str]]:
    """The server's URL for a database of this test's own, and its name; dropped at the end."""
    name = unique_name("schema")
    yield with_database(state_servers.server_url, name), name
    await drop_database(state_servers.server_url, name)


def service_env(server_env: dict[str, str], url: URL, **extra: str) -> dict[str, str]:
    database = url.render_as_string(hide_password=False)
    return {**server_env, "DATABASE_URL": database, "API_KEYS": "schema-test-key", **extra}


def refusal(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `agentkit COMMAND` and return how it ended; fail if it starts serving (or working) instead."""
    port = free_port()
    process = subprocess.Popen(  # noqa: S603 - this interpreter, our own module
        [sys.executable, "-m", "agentkit", command],
        env={**os.environ, **env, "PORT": str(port), "LOG_LEVEL": "WARNING"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while process.poll() is None:
            if command == "serve":
                try:
                    httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
                except httpx.TransportError:
                    pass
                else:
                    raise AssertionError("`agentkit serve` started serving on a database it should refuse")
            assert time.monotonic() < deadline, f"`agentkit {command}` neither refused nor stopped"
            time.sleep(0.2)
    finally:
        if process.poll() is None:
            process.kill()
        out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


async def _record_revision(url: URL, revision: str) -> None:
    engine = create_engine(url, pool_size=1, max_overflow=0)
    try:
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :revision"), {"revision": revision})
    finally:
        await engine.dispose()


@pytest.mark.parametrize("command", ["serve", "worker"])
async def test_a_service_refuses_an_unmigrated_database_with_one_line_naming_agentkit_migrate(
    server_env: dict[str, str], state_servers: StateServers, database: tuple[URL, str], command: str
) -> None:
    url, name = database
    await create_database(state_servers.server_url, name)  # empty: nobody ran `agentkit migrate`

    ended = await asyncio.to_thread(refusal, command, service_env(server_env, url))

    assert ended.returncode == 2
    assert ended.stderr.splitlines() == [
        f"agentkit: the database has no AgentKit schema (this release needs revision {head_revision()}): {MIGRATE}"
    ]


async def test_serve_refuses_a_schema_behind_the_code_naming_both_revisions(
    server_env: dict[str, str], state_servers: StateServers, database: tuple[URL, str]
) -> None:
    url, name = database
    await create_migrated_database(state_servers.server_url, name)
    await _record_revision(url, "0001")  # as an older release left it

    ended = await asyncio.to_thread(refusal, "serve", service_env(server_env, url))

    assert ended.returncode == 2
    assert ended.stderr.splitlines() == [
        f"agentkit: the database schema is at revision 0001, behind this release's {head_revision()}: {MIGRATE}"
    ]


async def test_a_schema_ahead_of_the_code_is_refused_even_with_migrate_on_start(
    server_env: dict[str, str], state_servers: StateServers, database: tuple[URL, str]
) -> None:
    url, name = database
    await create_migrated_database(state_servers.server_url, name)
    await _record_revision(url, "9999_from_a_newer_release")  # a newer release migrated it

    ended = await asyncio.to_thread(refusal, "serve", service_env(server_env, url, MIGRATE_ON_START="true"))

    assert ended.returncode == 2
    assert ended.stderr.splitlines() == [
        "agentkit: the database schema is at revision 9999_from_a_newer_release, which this release does not "
        f"know (its newest is {head_revision()}): a newer AgentKit migrated it; run that release, or first "
        f"downgrade the schema to {head_revision()} with its migrations"
    ]


async def test_serve_refuses_a_database_that_does_not_exist_saying_so(
    server_env: dict[str, str], database: tuple[URL, str]
) -> None:
    url, name = database  # never created

    ended = await asyncio.to_thread(refusal, "serve", service_env(server_env, url))

    shown = url.set(drivername="postgresql").render_as_string(hide_password=True)
    assert ended.returncode == 2
    assert ended.stderr.splitlines() == [
        f'agentkit: cannot read the database schema of {shown}: database "{name}" does not exist '
        "(InvalidCatalogNameError)"
    ]


async def test_serve_with_migrate_on_start_migrates_an_empty_database_and_serves_runs(
    server_env: dict[str, str], state_servers: StateServers, database: tuple[URL, str]
) -> None:
    url, name = database
    await create_database(state_servers.server_url, name)
    server = ServedProcess(service_env(server_env, url, MIGRATE_ON_START="true"))
    try:
        await asyncio.to_thread(server.wait_until_healthy)
        async with httpx.AsyncClient(base_url=server.base_url, headers=KEY, timeout=60) as client:
            created = await client.post("/v1/runs", json={"goal": "6 * 7"})
            health = await client.get("/health")
    finally:
        output = await asyncio.to_thread(server.stop)

    assert created.status_code == 201, created.text
    assert created.json()["answer"] == "42"
    assert health.json() == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
    assert "Traceback" not in output
