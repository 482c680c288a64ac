"""Hostile input: hundreds of malformed requests, each a 4xx problem with a stable code, none leaving a row.

Every case names the answer it must get (status and `code`); a group of cases runs on one app, and the
test reports every case that went wrong, not just the first. After each request the `runs` table is
counted: a refused request stores nothing.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres.tables import runs as runs_table
from agentkit.application.tools.output_schema import MAX_OUTPUT_SCHEMA_DEPTH
from agentkit.domain.messages import LLMResponse
from agentkit.entrypoints.http.body import MAX_JSON_DEPTH
from tests.http_fixtures import ApiClient, ApiFactory, headers

pytestmark = pytest.mark.integration

JSON = {"Content-Type": "application/json"}
MISSING_RUN = "5f0c54a4-2a8e-4d8e-9c53-bd8e0e8b2f47"


@dataclass(frozen=True)
class Case:
    """One hostile request and the answer it must get."""

    label: str
    status: int
    code: str
    method: str = "POST"
    path: str = "/v1/runs"
    body: bytes | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    detail: str = ""


def post(label: str, body: Any, status: int, code: str, detail: str = "") -> Case:
    raw = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    return Case(label, status, code, body=raw, extra_headers=dict(JSON), detail=detail)


def with_schema(schema: Any) -> dict[str, Any]:
    return {"goal": "x", "output_schema": schema}


def with_field(prop: Any, **root: Any) -> dict[str, Any]:
    return with_schema({"type": "object", "properties": {"x": prop}, **root})


def nested_schema(levels: int) -> bytes:
    """A body whose output schema nests `levels` object schemas (as bytes: json.dumps would recurse)."""
    opening = b'{"type": "object", "properties": {"a": ' * levels
    return b'{"goal": "x", "output_schema": ' + opening + b'{"type": "string"}' + b"}}" * levels + b"}"


def nul_cases() -> Iterator[Case]:
    """U+0000 anywhere: PostgreSQL text and JSONB cannot hold it."""
    yield post("nul in goal", {"goal": "a\u0000b"}, 422, "invalid_goal", "the goal contains U+0000 at character 1")
    yield post("goal is nul", {"goal": "\u0000"}, 422, "invalid_goal", "U+0000")
    yield post("nul after text", {"goal": "plan it\u0000"}, 422, "invalid_goal", "U+0000")
    yield post("nul in session", {"goal": "x", "session_id": "s\u0000"}, 422, "validation_error", "body.session_id")
    yield post(
        "nul key",
        with_schema({"type": "object", "properties": {"a\u0000": {"type": "string"}}}),
        422,
        "invalid_output_schema",
        'the key "a\\u0000"',
    )
    yield post(
        "nul description",
        with_field({"type": "string", "description": "\u0000"}),
        422,
        "invalid_output_schema",
        "$.properties.x.description: contains U+0000",
    )
    yield post(
        "nul enum", with_field({"enum": ["a", "\u0000"]}), 422, "invalid_output_schema", "enum[1]: contains U+0000"
    )
    yield post(
        "nul in unknown keyword",
        with_field({"type": "string", "title": "t\u0000"}),
        422,
        "invalid_output_schema",
        "$.properties.x.title: contains U+0000",
    )
    yield post(
        "nul deep in default",
        with_field({"type": "array", "default": [{"k": ["\u0000"]}]}),
        422,
        "invalid_output_schema",
        "default[0].k[0]",
    )
    yield post(
        "nul in required", with_field({"type": "string"}, required=["\u0000"]), 422, "invalid_output_schema", "U+0000"
    )
    yield post("lone surrogate in goal", b'{"goal": "\\ud800"}', 400, "malformed_json")
    yield post("lone low surrogate", b'{"goal": "a\\udfffb"}', 400, "malformed_json", "surrogate")
    yield post("surrogate in schema", b'{"goal": "x", "output_schema": {"\\udc00": 1}}', 400, "malformed_json")
    yield post("invalid utf-8", b'{"goal": "\xff\xfe"}', 400, "malformed_json", "UTF-8")
    yield post("overlong utf-8 nul", b'{"goal": "\xc0\x80"}', 400, "malformed_json")


def integer_cases() -> Iterator[Case]:
    """Integers: strict types, bounded to what the columns (int4) and the limits hold."""
    for name, too_big in (("token_budget", 2147483647), ("max_steps", 1000)):
        for value, message in (
            (too_big + 1, f"Expected `int` <= {too_big}"),
            (2**31, f"Expected `int` <= {too_big}"),
            (2**63, f"Expected `int` <= {too_big}"),
            (10**30, f"Expected `int` <= {too_big}"),
            (0, "Expected `int` >= 1"),
            (-1, "Expected `int` >= 1"),
            (-(2**63), "Expected `int` >= 1"),
        ):
            yield post(
                f"{name}={value}", {"goal": "x", name: value}, 422, "validation_error", f"body.{name}: {message}"
            )
        for raw, got in (
            (b'"5"', "str"),
            (b"5.5", "float"),
            (b"1.000001e2", "float"),
            (b"true", "bool"),
            (b"[5]", "array"),
            (b'{"n": 5}', "object"),
        ):
            body = b'{"goal": "x", "' + name.encode() + b'": ' + raw + b"}"
            yield post(
                f"{name}={raw.decode()}",
                body,
                422,
                "validation_error",
                f"body.{name}: Expected `int | null`, got `{got}`",
            )
        yield post(
            f"{name}=1e400", b'{"goal": "x", "' + name.encode() + b'": 1e400}', 422, "validation_error", "out of range"
        )
        yield post(
            f"{name}=10**5000",
            b'{"goal": "x", "' + name.encode() + b'": 1' + b"0" * 5000 + b"}",
            422,
            "validation_error",
            "out of range",
        )


def goal_cases() -> Iterator[Case]:
    for label, value, got in (
        ("int", 42, "int"),
        ("null", None, "null"),
        ("array", ["x"], "array"),
        ("object", {"text": "x"}, "object"),
        ("bool", True, "bool"),
        ("float", 1.5, "float"),
    ):
        yield post(f"goal {label}", {"goal": value}, 422, "validation_error", f"body.goal: Expected `str`, got `{got}`")
    yield post("goal empty", {"goal": ""}, 422, "validation_error", "body.goal: Expected `str` of length >= 1")
    for blank in ("   ", "\t\n\r", "\u3000\u2003", "\x1c\x1f", "\u2028"):
        yield post(f"goal blank {blank!r}", {"goal": blank}, 422, "invalid_goal", "the goal is empty")
    yield post(
        "goal too long", {"goal": "x" * 8001}, 422, "validation_error", "body.goal: Expected `str` of length <= 8000"
    )
    yield post("goal astral too long", {"goal": "😀" * 8001}, 422, "validation_error", "length <= 8000")
    yield post("goal over the body limit", {"goal": "x" * 70_000}, 413, "body_too_large")


def session_cases() -> Iterator[Case]:
    for label, value in (
        ("empty", ""),
        ("space", "has space"),
        ("newline at end", "abc\n"),
        ("slash", "a/b"),
        ("unicode", "sessión"),
        ("too long", "s" * 129),
        ("10 KB", "s" * 10_240),
        ("control", "a\x07b"),
    ):
        yield post(f"session {label}", {"goal": "x", "session_id": value}, 422, "validation_error", "body.session_id")
    wrong_types: tuple[tuple[str, object, str], ...] = (
        ("int", 5, "int"),
        ("array", ["s"], "array"),
        ("obj", {}, "object"),
    )
    for label, wrong, got in wrong_types:
        yield post(f"session {label}", {"goal": "x", "session_id": wrong}, 422, "validation_error", f"got `{got}`")


def output_schema_cases() -> Iterator[Case]:
    """Malformed output schemas: each a 422 naming the path, none a 500."""
    for label, body, detail in (
        ("required 5", with_field({"type": "string"}, required=5), "output_schema $.required: must be an array"),
        ("required null", with_field({"type": "string"}, required=None), "$.required: must be an array"),
        ("required ints", with_field({"type": "string"}, required=[1, 2]), "$.required: must be an array"),
        ("nested required", with_field({"type": "object", "properties": {}, "required": 5}), "$.properties.x.required"),
        ("type {}", with_field({"type": {}}), "$.properties.x.type: must be a type name"),
        ("type [[string]]", with_field({"type": [["string"]]}), "$.properties.x.type: must be a type name"),
        ("type null", with_field({"type": None, "enum": ["a"]}), "$.properties.x.type"),
        ("type list", with_field({"type": ["string", "integer"]}), "a type list must be one type"),
        ("type date", with_field({"type": "date"}), "unsupported type 'date'"),
        ("enum 5", with_field({"enum": 5}), "$.properties.x: enum must list strings or integers"),
        ("enum empty", with_field({"enum": []}), "enum must list strings or integers"),
        ("enum floats", with_field({"enum": [1.5]}), "enum must list strings or integers"),
        ("enum bools", with_field({"enum": [True]}), "enum must list strings or integers"),
        ("enum huge int", with_field({"enum": [2**63]}), "enum must list strings or integers (64-bit)"),
        ("enum nested", with_field({"enum": [["a"]]}), "enum must list strings or integers"),
        ("description int", with_field({"type": "string", "description": 5}), "description: must be a string"),
        ("items 5", with_field({"type": "array", "items": 5}), "$.properties.x.items must be an object"),
        ("items no type", with_field({"type": "array", "items": {}}), "needs a 'type' or an 'enum'"),
        ("property no type", with_field({}), "$.properties.x: needs a 'type' or an 'enum'"),
        ("property string", with_field("string"), "$.properties.x must be an object"),
        ("properties list", with_field({"type": "object", "properties": []}), "$.properties.x.properties"),
        ("object no properties", with_field({"type": "object"}), "must be an object schema with 'properties'"),
        ("root string", with_schema({"type": "string"}), "output_schema must be an object schema with 'properties'"),
        ("root no properties", with_schema({"type": "object"}), "must be an object schema with 'properties'"),
        ("root type list", with_schema({"type": ["object"], "properties": {}}), "must be an object schema"),
        ("root empty", with_schema({}), "must be an object schema with 'properties'"),
        ("quote in a name", with_schema({"type": "object", "properties": {'a"': {"type": "string"}}}), "property name"),
        (
            "newline in a name",
            with_field({"type": "object", "properties": {"a\n": {"type": "string"}}}),
            "may not hold",
        ),
    ):
        yield post(f"output_schema {label}", body, 422, "invalid_output_schema", detail)
    for label, value, got in (("list", [], "array"), ("string", "object", "str"), ("number", 5, "int")):
        yield post(f"output_schema {label}", with_schema(value), 422, "validation_error", f"got `{got}`")
    # deep schemas: refused by the schema check under the body limit, by the body's depth bound over it
    json_levels_at_limit = MAX_OUTPUT_SCHEMA_DEPTH // 2
    for levels in (json_levels_at_limit, json_levels_at_limit + 3, 30):
        yield post(
            f"output_schema {levels} levels",
            nested_schema(levels),
            422,
            "invalid_output_schema",
            f"nested deeper than {MAX_OUTPUT_SCHEMA_DEPTH} levels",
        )
    for levels in (40, 120, 500, 1000):
        yield post(
            f"output_schema {levels} levels",
            nested_schema(levels),
            400,
            "json_too_deep",
            f"nests deeper than {MAX_JSON_DEPTH} levels",
        )


def body_shape_cases() -> Iterator[Case]:
    for depth in (MAX_JSON_DEPTH + 1, 5000, 30_000):
        yield post(f"array {depth} deep", b"[" * depth + b"]" * depth, 400, "json_too_deep")
    yield post("unclosed 20,000 [", b"[" * 20_000, 400, "json_too_deep")
    yield post("goal nested 5000", b'{"goal": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "json_too_deep")
    yield post("objects 5000 deep", b'{"a":' * 5000 + b"1" + b"}" * 5000, 400, "json_too_deep")
    yield post("brackets in a string are text", {"goal": "[" * 5000}, 201, "")  # counted as text, not depth
    for label, raw, status, code in (
        ("empty object", b"{}", 422, "validation_error"),
        ("null", b"null", 422, "validation_error"),
        ("array", b"[]", 422, "validation_error"),
        ("string", b'"goal"', 422, "validation_error"),
        ("number", b"42", 422, "validation_error"),
        ("truncated", b'{"goal": "x"', 400, "malformed_json"),
        ("trailing garbage", b'{"goal": "x"} x', 400, "malformed_json"),
        ("two objects", b'{"goal": "x"}{"goal": "y"}', 400, "malformed_json"),
        ("single quotes", b"{'goal': 'x'}", 400, "malformed_json"),
        ("comment", b'{"goal": "x" /* hi */}', 400, "malformed_json"),
        ("NaN", b'{"goal": "x", "max_steps": NaN}', 400, "malformed_json"),
        ("bom", b'\xef\xbb\xbf{"goal": "x"}', 400, "malformed_json"),
        ("raw nul byte", b'{"goal": "a\x00b"}', 400, "malformed_json"),
        ("raw newline in string", b'{"goal": "a\nb"}', 400, "malformed_json"),
        ("unknown field", b'{"goal": "x", "temperature": 2}', 422, "validation_error"),
        ("unknown field null", b'{"goal": "x", "owner": null}', 422, "validation_error"),
        ("whitespace only", b"   ", 400, "malformed_json"),
        ("binary", bytes(range(256)), 400, "malformed_json"),
    ):
        yield post(f"body {label}", raw, status, code)
    yield Case("no body", 400, "missing_body", body=b"", extra_headers=dict(JSON))
    yield Case("no body, no type", 400, "missing_body", body=b"")
    yield Case(
        "no body, text type", 415, "unsupported_media_type", body=b"", extra_headers={"Content-Type": "text/plain"}
    )


def content_type_cases() -> Iterator[Case]:
    body = b'{"goal": "x"}'
    for media_type in (
        "text/plain",
        "application/xml",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin-1",
        "application/jsonx",
        "application/problem+json",
        "json",
        "*/*",
        "garbage;;;",
        "text/html; " + "x" * 5000,
    ):
        yield Case(
            f"content-type {media_type[:40]}",
            415,
            "unsupported_media_type",
            body=body,
            extra_headers={"Content-Type": media_type},
        )
    form = b'--x\r\nContent-Disposition: form-data; name="goal"\r\n\r\nx\r\n--x--\r\n'
    multipart = {"Content-Type": "multipart/form-data; boundary=x"}
    yield Case("multipart form", 415, "unsupported_media_type", body=form, extra_headers=multipart)


def header_cases() -> Iterator[Case]:
    body = b'{"goal": "x"}'
    for label, key in (
        ("10 KB", "k" * 10_240),
        ("256 chars", "k" * 256),
        ("inner tab", "a\tb"),
        ("latin-1", "clé"),
        ("DEL", "a\x7fb"),
    ):
        yield Case(
            f"Idempotency-Key {label}",
            422,
            "validation_error",
            body=body,
            extra_headers={**JSON, "Idempotency-Key": key},
        )
    for label, request_id in (("latin-1", "é"), ("10 KB", "r" * 10_240), ("spaces", "a b c"), ("empty", "")):
        yield Case(
            f"X-Request-ID {label}",
            404,
            "run_not_found",
            method="GET",
            path=f"/v1/runs/{MISSING_RUN}",
            extra_headers={"X-Request-ID": request_id},
        )
    yield Case("X-API-Key 10 KB", 401, "unauthorized", body=body, extra_headers={**JSON, "X-API-Key": "k" * 10_240})
    yield Case("X-API-Key empty", 401, "unauthorized", body=body, extra_headers={**JSON, "X-API-Key": ""})


def run_id_cases() -> Iterator[Case]:
    spellings = (
        MISSING_RUN,
        MISSING_RUN.upper(),
        "{" + MISSING_RUN + "}",
        "urn:uuid:" + MISSING_RUN,
        MISSING_RUN.replace("-", ""),
    )
    garbage = (
        "x",
        "0" * 36,
        MISSING_RUN + "0",
        MISSING_RUN[:-1] + "g",
        "%00",
        "a" * 10_000,
        "%F0%9F%98%80",
        "urn:uuid:",
        "{}",
        "null",
        "-1",
    )
    for run_id in (*spellings, *garbage):
        for method, suffix in (("GET", ""), ("GET", "/trace"), ("POST", "/cancel")):
            yield Case(
                f"{method} {suffix or 'read'} {run_id[:40]}",
                404,
                "run_not_found",
                method=method,
                path=f"/v1/runs/{run_id}{suffix}",
            )
    # a path that climbs out of /v1/runs, or grows a segment, is no route at all
    for path in ("/v1/runs/..%2F..%2Fetc", "/v1/runs/a%2Fb", "/v1/runs/a%2Fb/trace"):
        yield Case(f"no route {path}", 404, "not_found", method="GET", path=path)


def wait_cases() -> Iterator[Case]:
    for value in ("abc", "-1", "61", "nan", "inf", "-inf", "1e309", "", "0x10", "1,5", "10" * 500):
        yield Case(
            f"wait={value[:20]}",
            422,
            "validation_error",
            method="GET",
            path=f"/v1/runs/{MISSING_RUN}",
            params={"wait": value},
            detail="query parameter wait",
        )


GROUPS = {
    "nul": nul_cases,
    "integers": integer_cases,
    "goal": goal_cases,
    "session": session_cases,
    "output_schema": output_schema_cases,
    "body_shape": body_shape_cases,
    "content_type": content_type_cases,
    "headers": header_cases,
    "run_ids": run_id_cases,
    "wait": wait_cases,
}


async def count_runs(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(runs_table))).scalar_one())


async def send(api: ApiClient, case: Case) -> Any:
    # as bytes: httpx would refuse a str header that is not ASCII; latin-1 is what HTTP/1.1 carries
    request_headers = [(k.encode(), v.encode("latin-1")) for k, v in {**headers(), **case.extra_headers}.items()]
    if case.method == "GET":
        return await api.get(case.path, headers=request_headers, params=case.params)
    return await api.post(case.path, content=case.body, headers=request_headers, params=case.params)


@pytest.mark.parametrize("group", list(GROUPS))
async def test_hostile_requests_get_4xx_problems_and_store_nothing(
    api_factory: ApiFactory, pg_engine: AsyncEngine, group: str
) -> None:
    api = await api_factory([LLMResponse(text="done")] * 10, rate_limit_per_min=100_000, response_timeout_s=5)
    wrong: list[str] = []
    for case in GROUPS[group]():
        before = await count_runs(pg_engine)
        response = await send(api, case)
        stored = await count_runs(pg_engine) - before
        if case.status == 201:  # a control case: the hostile-looking request is fine
            if response.status_code != 201 or stored != 1:
                wrong.append(f"{case.label}: {response.status_code} {response.text[:200]}")
            continue
        body = response.json() if response.headers.get("content-type") == "application/problem+json" else None
        if (
            response.status_code != case.status
            or body is None
            or body["code"] != case.code
            or case.detail not in body["detail"]
            or body["status"] != case.status
            or "Traceback" in response.text
            or stored != 0
        ):
            wrong.append(f"{case.label}: {response.status_code} stored={stored} {response.text[:300]}")
    assert not wrong, f"{len(wrong)} cases went wrong:\n" + "\n".join(wrong)


def test_the_suite_is_large_enough() -> None:
    assert sum(len(list(make())) for make in GROUPS.values()) >= 150


@pytest.mark.parametrize(
    "spell",
    [str.upper, lambda i: "{" + i + "}", lambda i: "urn:uuid:" + i, lambda i: i.replace("-", "")],
    ids=["upper", "braces", "urn", "no-dashes"],
)
async def test_other_spellings_of_a_run_id_name_the_same_run_everywhere(api_factory: ApiFactory, spell: Any) -> None:
    api = await api_factory([LLMResponse(text="done")])
    run_id = (await api.post("/v1/runs", json={"goal": "x"}, headers=headers())).json()["id"]

    read = await api.get(f"/v1/runs/{spell(run_id)}", headers=headers())
    trace = await api.get(f"/v1/runs/{spell(run_id)}/trace", headers=headers())
    cancel = await api.post(f"/v1/runs/{spell(run_id)}/cancel", headers=headers())

    assert (read.status_code, read.json()["id"]) == (200, run_id)
    assert (trace.status_code, trace.json()["run_id"]) == (200, run_id)
    # the run has finished: cancelling it is a conflict, on the same run
    assert (cancel.status_code, cancel.json()["code"]) == (409, "run_conflict")
