"""Problem details for bad requests, and the OpenAPI document: on in-memory state (no server is involved)."""

import pytest

from agentkit.domain.messages import LLMResponse
from tests.http_fixtures import ApiFactory, headers


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
            "invalid_output_schema",
            "output_schema must be an object schema with 'properties'",
        ),
        (b"", 400, "missing_body", "the request has no body; send a JSON object"),
        (
            b'{"goal": "x"',
            400,
            "malformed_json",
            "the JSON ends before it is complete (after 12 bytes): a string, object or array is not closed",
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
    assert response.json()["detail"] == (
        "the request body is larger than the server accepts: at most 1024 bytes (MAX_BODY_BYTES)"
    )


@pytest.mark.parametrize(
    ("wait", "detail"),
    [
        ("abc", "query parameter wait='abc': expected a number"),
        ("-1", "query parameter wait='-1': expected a number >= 0.0"),
        ("61", "query parameter wait='61': expected a number <= 60.0"),
    ],
)
async def test_a_bad_wait_names_the_parameter_and_the_value(api_factory: ApiFactory, wait: str, detail: str) -> None:
    api = await api_factory([LLMResponse(text="done")])
    run = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()

    response = await api.get(f"/v1/runs/{run['id']}?wait={wait}", headers=headers())

    assert response.status_code == 422
    assert response.json()["detail"] == detail
    assert response.json()["errors"][0]["key"] == "wait"


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


async def test_the_openapi_document_matches_the_routes(api_factory: ApiFactory) -> None:
    api = await api_factory([])

    document = (await api.get("/docs/openapi.json")).json()
    docs_page = await api.get("/docs")

    assert set(document["paths"]) == {
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/trace",
        "/v1/runs/{run_id}/cancel",
        "/v1/runs/{run_id}/approvals",
        "/v1/runs/{run_id}/tool_outputs",
        "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}/webhooks",
        "/v1/tools",
        "/v1/agents",
        "/v1/chat",
        "/v1/sessions/{session_id}",
        "/health",
        "/metrics",
    }
    chat = document["paths"]["/v1/chat"]["post"]
    assert set(chat["responses"]) == {"200", "202", "400", "401", "413", "415", "422", "429", "503"}
    assert "unknown_agent" in chat["responses"]["422"]["description"]
    assert set(chat["responses"]["200"]["content"]) == {"application/json", "text/event-stream"}
    assert "UIChatRequest" in str(chat["requestBody"])  # the Vercel AI SDK's useChat body, beside ChatCreate
    assert document["components"]["schemas"]["ChatCreate"]["additionalProperties"] is False
    assert "422" in document["paths"]["/v1/tools"]["get"]["responses"]
    listing = document["paths"]["/v1/runs"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"status", "session_id", "created_before", "limit", "cursor"}
    assert set(listing["responses"]) == {"200", "400", "401", "404", "422", "429", "503"}
    assert set(document["paths"]["/v1/sessions/{session_id}"]) == {"get", "delete"}
    trace = document["paths"]["/v1/runs/{run_id}/trace"]["get"]
    assert "include" in {p["name"] for p in trace["parameters"]}
    events = document["paths"]["/v1/runs/{run_id}/events"]["get"]
    assert {p["name"] for p in events["parameters"]} == {"run_id", "Last-Event-ID", "after"}
    assert set(events["responses"]["200"]["content"]) == {"text/event-stream"}
    assert set(events["responses"]) == {"200", "400", "401", "404", "422", "429", "503"}
    assert document["paths"]["/metrics"]["get"]["security"] == [{"ApiKey": []}]
    create = document["paths"]["/v1/runs"]["post"]
    assert {p["name"] for p in create["parameters"]} == {"Idempotency-Key", "Prefer", "format"}
    assert "RunCreate" in str(create["requestBody"])
    assert set(create["responses"]) == {"200", "201", "202", "400", "401", "409", "413", "415", "422", "429", "503"}
    assert set(create["responses"]["200"]["content"]) == {"text/event-stream"}  # a streamed answer
    assert "application/problem+json" in create["responses"]["422"]["content"]
    assert "Idempotency-Key was used before" in create["responses"]["422"]["description"]
    assert "MAX_BODY_BYTES" in create["description"]
    run_create = document["components"]["schemas"]["RunCreate"]
    assert run_create["additionalProperties"] is False
    assert run_create["properties"]["goal"]["maxLength"] == 8000  # MAX_GOAL_CHARS, what the server enforces
    assert run_create["properties"]["token_budget"]["maximum"] == 2**31 - 1
    assert run_create["properties"]["output_schema"]["oneOf"][0] == {"$ref": "#/components/schemas/OutputSchema"}
    approvals = document["paths"]["/v1/runs/{run_id}/approvals"]["post"]
    assert "digest_mismatch" in approvals["responses"]["409"]["description"]
    assert document["components"]["schemas"]["ApprovalCreate"]["required"] == ["call_id", "decision", "digest"]
    assert "requires_action" in document["components"]["schemas"]["RunView"]["properties"]["status"]["enum"]
    assert "client_tools" in run_create["properties"]
    read = document["paths"]["/v1/runs/{run_id}"]["get"]
    assert set(read["responses"]) == {"200", "400", "401", "404", "422", "429", "503"}
    assert set(document["paths"]["/health"]["get"]["responses"]) == {"200", "503"}
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {"type": "apiKey", "name": "X-API-Key", "in": "header"}
    assert docs_page.status_code == 200


async def test_the_idempotency_key_answers_are_documented_where_the_header_is_taken_and_only_there(
    api_factory: ApiFactory,
) -> None:
    api = await api_factory([])

    document = (await api.get("/docs/openapi.json")).json()

    operations = [
        (f"{method.upper()} {path}", op) for path, item in document["paths"].items() for method, op in item.items()
    ]
    takes_key = {name for name, op in operations if "Idempotency-Key" in {p["name"] for p in op.get("parameters", [])}}
    says_422 = {
        name
        for name, op in operations
        if "idempotency_key_reused" in op["responses"].get("422", {}).get("description", "")
    }
    says_409 = {
        name
        for name, op in operations
        if "idempotency_conflict" in op["responses"].get("409", {}).get("description", "")
    }
    assert takes_key == {"POST /v1/runs"}
    # draft-ietf-httpapi-idempotency-key-header: another payload with the key is a 422, one in progress a 409
    assert says_422 == takes_key
    assert says_409 == takes_key
    create = document["paths"]["/v1/runs"]["post"]
    assert "application/problem+json" in create["responses"]["422"]["content"]
