"""Fixtures of the fault suite: private servers, a migrated database on them, the app on top.

Outages last AGENTKIT_FAULT_OUTAGE_S seconds (default 4; `AGENTKIT_FAULT_OUTAGE_S=10` gives the
10 s figures of docs/benchmarks.md) and freezes AGENTKIT_FAULT_FREEZE_S (default 10: longer than
the requests' bounds, so that the bounds show).
"""

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentkit.adapters.postgres import parse_database_url
from tests.faults.app import AppServer
from tests.faults.servers import PostgresServer, RedisServer
from tests.state_fixtures import create_migrated_database

OUTAGE_S = float(os.environ.get("AGENTKIT_FAULT_OUTAGE_S") or 4)
FREEZE_S = float(os.environ.get("AGENTKIT_FAULT_FREEZE_S") or 10)
DATABASE = "agentkit_faults"


@dataclass
class FaultStack:
    """The private servers, the database on them, and a way to start apps on it."""

    work: Path
    postgres: PostgresServer
    redis: RedisServer
    dsn: str  # the app's database, plain postgresql:// form

    def app(self, name: str = "app", *, command: str = "serve", **settings: str) -> AppServer:
        """An app or a worker (not started) on this stack; its files in a folder of its own."""
        folder = self.work / name
        folder.mkdir(exist_ok=True)
        return AppServer(folder, self.dsn, self.redis.url, command=command, **settings)


@pytest.fixture
def work_dir() -> Iterator[Path]:
    """A folder for the servers' data and the app's files, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="agentkit-faults-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
async def stack(work_dir: Path) -> AsyncIterator[FaultStack]:
    """A private PostgreSQL (migrated database `agentkit_faults`) and Redis, stopped and removed afterwards."""
    postgres, redis = PostgresServer(work_dir / "postgres"), RedisServer(work_dir / "redis")
    try:
        await asyncio.to_thread(postgres.start)
        await asyncio.to_thread(redis.start)
        url = await create_migrated_database(parse_database_url(postgres.url), DATABASE)
        dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
        yield FaultStack(work=work_dir, postgres=postgres, redis=redis, dsn=dsn)
    finally:
        await asyncio.to_thread(redis.remove)
        await asyncio.to_thread(postgres.remove)


@pytest.fixture
async def app(stack: FaultStack) -> AsyncIterator[AppServer]:
    """The app on the stack, started; stopped (gracefully) afterwards."""
    server = stack.app()
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)
