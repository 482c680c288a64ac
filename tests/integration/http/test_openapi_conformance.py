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

from typing import Any

import httpx
import hypothesis
import msgspec
import pytest
import schemathesis
from dishka.integrations.litestar import LitestarProvider
from hypothesis.stateful import run_state_machine_as_test
from schemathesis.config import SchemathesisConfig

from agentkit.entrypoints.wiring import locate_state, make_container
from agentkit.entrypoints.wiring.serving import http_app
from agentkit.entrypoints.wiring.settings import load_settings
from tests.http_fixtures import KEY_A
from tests.integration.http.served_api import SETTINGS, ServedApi, served_api

__all__ = ["served_api"]  # the fixture, used by name

pytestmark = pytest.mark.integration

EXAMPLES_PER_OPERATION = 25
STATEFUL_SCENARIOS = 15


def the_document() -> dict[str, Any]:
    """The OpenAPI document of an app with the same settings as the served one (built, never started)."""
    env = {"DATABASE_URL": "postgresql://unused@127.0.0.1/unused", "STATE_BACKEND": "external", "API_KEYS": KEY_A}
    settings = load_settings(env, redis_url="redis://127.0.0.1:1/0", **SETTINGS)
    app = http_app(make_container(settings, LitestarProvider(), endpoints=locate_state(settings)), settings)
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
