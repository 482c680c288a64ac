"""Hostile bytes only a real socket carries: header values that are not UTF-8, raw paths and queries.

The in-process client re-encodes headers, so these go to the API served on a loopback port as raw
HTTP/1.1. Each request the app sees gets a problem with a stable code and stores nothing; what the
HTTP parser itself refuses (a NUL in a header) is a 400 from the server, never a 500.
"""

import socket

import pytest

from tests.http_fixtures import KEY_A
from tests.integration.http.served_api import ServedApi, served_api

__all__ = ["served_api"]  # the fixture, used by name

pytestmark = pytest.mark.integration

MISSING_RUN = "5f0c54a4-2a8e-4d8e-9c53-bd8e0e8b2f47"
BODY = b'{"goal": "x"}'


def raw_request(url: str, head: bytes, body: bytes = b"") -> tuple[int, dict[bytes, bytes], bytes]:
    """Send `head` (request line and headers, without the blank line) and `body`; the status, headers, body."""
    host, port = url.removeprefix("http://").split(":")
    request = head + b"\r\nHost: x\r\nConnection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(request + body)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    answer = b"".join(chunks)
    header_block, _, content = answer.partition(b"\r\n\r\n")
    status_line, *lines = header_block.split(b"\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines)}
    return int(status_line.split()[1]), headers, content


KEY = b"X-API-Key: " + KEY_A.encode()


@pytest.mark.parametrize(
    ("head", "body", "status", "code"),
    [
        (
            b"GET /v1/runs/" + MISSING_RUN.encode() + b" HTTP/1.1\r\n" + KEY + b"\r\nX-Request-ID: \xe9",
            b"",
            404,
            b"run_not_found",
        ),
        (b"POST /v1/runs HTTP/1.1\r\n" + KEY + b"\r\nIdempotency-Key: cl\xe9", BODY, 422, b"validation_error"),
        (b"POST /v1/runs HTTP/1.1\r\nX-API-Key: \xff\xfe", BODY, 401, b"unauthorized"),
        (
            b"POST /v1/runs HTTP/1.1\r\n" + KEY + b"\r\nContent-Type: application/json\xff",
            BODY,
            415,
            b"unsupported_media_type",
        ),
        (
            b"POST /v1/runs HTTP/1.1\r\n" + KEY + b"\r\nContent-Type: application/json",
            b'{"goal": "\xff"}',
            400,
            b"malformed_json",
        ),
        (b"GET /v1/runs/%FF HTTP/1.1\r\n" + KEY, b"", 404, b"run_not_found"),
        (b"GET /v1/runs/%00/trace HTTP/1.1\r\n" + KEY, b"", 404, b"run_not_found"),
        (b"POST /v1/runs/%E2%80%8F/cancel HTTP/1.1\r\n" + KEY, b"", 404, b"run_not_found"),
        (b"GET /v1/runs/" + MISSING_RUN.encode() + b"?wait=%FF HTTP/1.1\r\n" + KEY, b"", 422, b"validation_error"),
        (b"GET /v1/runs/" + MISSING_RUN.encode() + b"?wait=1&wait=2 HTTP/1.1\r\n" + KEY, b"", 404, b"run_not_found"),
    ],
    ids=[
        "request-id-latin-1",
        "idempotency-key-latin-1",
        "api-key-bytes",
        "content-type-bytes",
        "body-not-utf-8",
        "path-not-utf-8",
        "path-nul",
        "path-rtl-mark",
        "query-not-utf-8",
        "query-twice",
    ],
)
def test_raw_bytes_get_problems_not_500s(
    served_api: ServedApi, head: bytes, body: bytes, status: int, code: bytes
) -> None:
    before = served_api.run(served_api.count_runs())

    answer_status, answer_headers, content = raw_request(served_api.url, head, body)

    assert (answer_status, answer_headers[b"content-type"]) == (status, b"application/problem+json"), content
    assert b'"code":"' + code + b'"' in content
    assert b"Traceback" not in content
    assert served_api.run(served_api.count_runs()) == before


def test_what_the_http_parser_refuses_is_a_400(served_api: ServedApi) -> None:
    answer_status, _, _ = raw_request(served_api.url, b"GET /health HTTP/1.1\r\nX-Request-ID: a\x00b")

    assert answer_status == 400
