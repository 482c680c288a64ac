"""Problem details for bad requests, /health, the OpenAPI document, and runs whose executor died."""

from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres import create_database, drop_database
from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.domain.messages import LLMResponse
from tests.http_fixtures import ApiFactory, headers
from tests.state_fixtures import StateServers, unique_name

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("body", "status", "code", "detail"),
    [
        (b"{not json", 400, "malformed_json", "JSON is malformed"),
        (b'{"goal": 42}', 422, "validation_error", "body.goal: Expected `str`, got `int`"),
        (b'{"goal": "x", "temperature": 2}', 422, "validation_error", "Object contains unknown field `temperature`"),
        (b'{"session_id": "s1"}', 422, "validation_error", "Object missing required field `goal`"),
        (b'{"goal": ""}', 422, "validation_error", "body.goal: Expected `str` of length >= 1"),
        (b'{"goal": "x", "max_steps": 0}', 422, "validation_error", "body.max_steps: Expected `int` >= 1"),
        (b'{"goal": "x", "session_id": "has space"}', 422, "validation_error", "body.session_id"),
        (b'{"goal": "   "}', 422, "invalid_goal", "the goal is empty"),
        (b"[]", 422, "validation_error", "Expected `object`, got `array`"),
        (b'{"goal": "x", "token_budget": 0}', 422, "validation_error", "body.token_budget: Expected `int` >= 1"),
        (
            b'{"goal": "x", "output_schema": {"type": "string"}}',
            422,
            "invalid_goal",
            "output_schema must be an object schema with 'properties'",
        ),
    ],
)
async def test_bad_bodies_get_precise_problem_details(
    api_factory: ApiFactory, body: bytes, status: int, code: str, detail: str
) -> None:
    api = await api_factory([LLMResponse(text="never called")])

    response = await api.post("/v1/runs", content=body, headers=headers(**{"Content-Type": "application/json"}))

    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == code
    assert detail in problem["detail"]
    assert problem["status"] == status
    assert problem["instance"] == "/v1/runs"
    assert problem["type"].startswith("https://")
    assert "Traceback" not in response.text


async def test_an_oversized_body_is_refused_with_413(api_factory: ApiFactory) -> None:
    api = await api_factory([], max_body_bytes=1024)

    response = await api.post("/v1/runs", json={"goal": "x" * 5000}, headers=headers())

    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"


async def test_a_goal_over_the_limit_is_refused_and_the_document_says_the_limit(api_factory: ApiFactory) -> None:
    api = await api_factory([], max_goal_chars=100)

    response = await api.post("/v1/runs", json={"goal": "x" * 101}, headers=headers())
    document = (await api.get("/docs/openapi.json")).json()

    assert response.status_code == 422
    assert response.json()["detail"] == "body.goal: Expected `str` of length <= 100"
    assert document["components"]["schemas"]["RunCreate"]["properties"]["goal"]["maxLength"] == 100


async def test_unknown_routes_and_methods_are_problems_too(api_factory: ApiFactory) -> None:
    api = await api_factory([])

    missing = await api.get("/v1/nothing-here", headers=headers())
    wrong_method = await api.delete("/v1/tools", headers=headers())

    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert (wrong_method.status_code, wrong_method.json()["code"]) == (405, "method_not_allowed")


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


async def test_the_openapi_document_matches_the_routes(api_factory: ApiFactory) -> None:
    api = await api_factory([])

    document = (await api.get("/docs/openapi.json")).json()
    docs_page = await api.get("/docs")

    assert set(document["paths"]) == {
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/trace",
        "/v1/runs/{run_id}/cancel",
        "/v1/tools",
        "/health",
    }
    create = document["paths"]["/v1/runs"]["post"]
    assert {p["name"] for p in create["parameters"]} == {"Idempotency-Key", "Prefer"}
    assert "RunCreate" in str(create["requestBody"])
    assert set(create["responses"]) == {"201", "202", "400", "401", "409", "413", "415", "422", "429", "503"}
    assert "application/problem+json" in create["responses"]["422"]["content"]
    assert "Idempotency-Key was used before" in create["responses"]["422"]["description"]
    assert "MAX_BODY_BYTES" in create["description"]
    run_create = document["components"]["schemas"]["RunCreate"]
    assert run_create["additionalProperties"] is False
    assert run_create["properties"]["goal"]["maxLength"] == 8000  # MAX_GOAL_CHARS, what the server enforces
    assert run_create["properties"]["token_budget"]["maximum"] == 2**31 - 1
    assert run_create["properties"]["output_schema"]["oneOf"][0] == {"$ref": "#/components/schemas/OutputSchema"}
    read = document["paths"]["/v1/runs/{run_id}"]["get"]
    assert set(read["responses"]) == {"200", "400", "401", "404", "422", "429", "503"}
    assert set(document["paths"]["/health"]["get"]["responses"]) == {"200", "503"}
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {"type": "apiKey", "name": "X-API-Key", "in": "header"}
    assert docs_page.status_code == 200


async def test_a_run_whose_executor_died_expires(api_factory: ApiFactory, pg_engine: AsyncEngine) -> None:
    api = await api_factory([LLMResponse(text="done")], run_lease_s=0.3)
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()
    # make it look like a run left running by a process that died: running, lease long gone
    async with pg_engine.begin() as conn:
        await conn.execute(
            update(runs_table)
            .where(runs_table.c.id == run["id"])
            .values(status="running", finished_at=None, expires_at=runs_table.c.created_at - timedelta(seconds=1))
        )

    expired = None
    for _ in range(40):
        expired = (await api.get(f"/v1/runs/{run['id']}", headers=headers(), params={"wait": 0.1})).json()
        if expired["status"] != "running":
            break

    assert expired is not None
    assert expired["status"] == "expired"
    assert expired["failure_reason"] == "worker_lost"
