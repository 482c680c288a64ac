"""Schemathesis, every check, against the API served by uvicorn on a loopback port: the document is true.

Every operation gets the examples, coverage and fuzzing phases (positive and negative data, every
check: no 5xx, status codes and content types documented, responses matching their schemas, valid
data accepted, invalid data refused, auth enforced), then linked operations run as a state machine.
Each case starts from an empty `runs` table: a reused Idempotency-Key's 422 depends on what earlier
cases stored, not on the document, just as a 404 for an unknown run does.

Schemathesis needs the document when pytest collects the tests, before the server runs, so it is
loaded from an app built the same way (it never connects); the first test checks that the served
document is that one.
"""

import asyncio
import secrets
import socket
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import httpx
import hypothesis
import msgspec
import pytest
import schemathesis
import uvicorn
from dishka.integrations.litestar import LitestarProvider
from hypothesis.stateful import run_state_machine_as_test
from schemathesis.config import SchemathesisConfig
from sqlalchemy import text

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.postgres import create_engine
from agentkit.adapters.redis import create_redis
from agentkit.application.settings import load_settings
from agentkit.application.tools import ToolRegistry
from agentkit.container import make_container
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.http import create_app
from tests.integration.http.conftest import KEY_A, Overrides
from tests.sample_tools import add, lookup
from tests.state_fixtures import StateServers

pytestmark = pytest.mark.integration

T = TypeVar("T")
EXAMPLES_PER_OPERATION = 25
STATEFUL_SCENARIOS = 15
# a high rate limit, so cases reach the handlers; a short wait, as runs end in milliseconds
SETTINGS: dict[str, Any] = {"rate_limit_per_min": 1_000_000, "response_timeout_s": 2.0}


class ServedApi:
    """The app under uvicorn in a thread of its own, with its own event loop, on a loopback socket."""

    def __init__(self, state: StateServers) -> None:
        self.prefix = f"agentkit-test:{secrets.token_hex(8)}:"
        env = {
            "DATABASE_URL": state.database_url.render_as_string(hide_password=False),
            "REDIS_URL": state.redis_url,
            "REDIS_KEY_PREFIX": self.prefix,
            "STATE_BACKEND": "external",
            "API_KEYS": KEY_A,
            "LOG_LEVEL": "WARNING",
        }
        self.settings = load_settings(env, **SETTINGS)
        self._state = state
        llm = ScriptedLLMClient([LLMResponse(text="done")], per_conversation=True)
        llm.record_requests = False
        registry = ToolRegistry([add, lookup], default_timeout_s=self.settings.tool_timeout_s)
        container = make_container(self.settings, LitestarProvider(), Overrides(llm, registry))
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        config = uvicorn.Config(create_app(container, self.settings), log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="served-api", daemon=True)
        self._engine = create_engine(state.database_url, pool_size=1, max_overflow=0)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._server.serve(sockets=[self._socket]))
        finally:
            leftover = asyncio.all_tasks(self._loop)
            for task in leftover:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
            self._loop.close()

    def start(self) -> None:
        self._thread.start()
        for _ in range(600):  # up to 60 s on a loaded machine
            if self._server.started:
                return
            threading.Event().wait(0.1)
        raise RuntimeError("the API did not start")

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's loop (where its engine lives) and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=60)

    async def forget_runs(self) -> None:
        async with self._engine.begin() as conn:
            await conn.execute(text("TRUNCATE runs, steps"))

    async def _clean_up(self) -> None:
        await self._engine.dispose()
        redis = create_redis(self._state.redis_url)
        keys = [key async for key in redis.scan_iter(match=f"{self.prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()

    def stop(self) -> None:
        self.run(self._clean_up())
        self._server.should_exit = True
        self._thread.join(timeout=60)
        self._socket.close()


@pytest.fixture(scope="module")
def served_api(state_servers: StateServers) -> Iterator[ServedApi]:
    """The API on a loopback port for this module's tests."""
    served = ServedApi(state_servers)
    served.start()
    yield served
    served.stop()


def the_document() -> dict[str, Any]:
    """The OpenAPI document of an app with the same settings as the served one (built, never started)."""
    env = {"DATABASE_URL": "postgresql://unused@127.0.0.1/unused", "STATE_BACKEND": "external", "API_KEYS": KEY_A}
    settings = load_settings(env, redis_url="redis://127.0.0.1:1/0", **SETTINGS)
    app = create_app(make_container(settings, LitestarProvider()), settings)
    document: dict[str, Any] = app.openapi_schema.to_schema()
    return document


CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": 20261201,  # reproducible in CI; change it locally to explore
        "auth": {"openapi": {"ApiKey": {"api_key": KEY_A}}},
        "generation": {"max-examples": EXAMPLES_PER_OPERATION, "database": "none"},
    }
)
schema = schemathesis.openapi.from_dict(the_document(), config=CONFIG)


@pytest.fixture(scope="module")
def base_url(served_api: ServedApi) -> str:
    """Where schemathesis sends its requests."""
    schema.config.update(base_url=served_api.url)
    return served_api.url


def test_the_served_document_is_the_one_tested(served_api: ServedApi) -> None:
    with httpx.Client() as client:
        served = client.get(f"{served_api.url}/docs/openapi.json").json()

    assert served == msgspec.json.decode(msgspec.json.encode(the_document()))


@schema.parametrize()
def test_every_operation_does_what_the_document_says(case: Any, served_api: ServedApi, base_url: str) -> None:
    served_api.run(served_api.forget_runs())
    case.call_and_validate(base_url=base_url)


def test_linked_operations_do_what_the_document_says(served_api: ServedApi, base_url: str) -> None:
    class Scenarios(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            served_api.run(served_api.forget_runs())

    run_state_machine_as_test(
        Scenarios,
        settings=hypothesis.settings(
            max_examples=STATEFUL_SCENARIOS, stateful_step_count=6, deadline=None, database=None
        ),
    )
