"""SafeFetcher: scheme, address and redirect checks, pinned connections, time and size limits.

No test opens a socket: names resolve through `FixedResolver` and requests go to an
`httpx.MockTransport` that records them, so "refused" also means "the transport saw nothing".
"""

import asyncio
import gzip
import socket
import zlib
from collections.abc import AsyncIterator, Callable, Sequence

import httpx
import pytest

from agentkit.adapters.tools.errors import FetchFailed, FetchRefused
from agentkit.adapters.tools.http_fetch import FetchLimits, SafeFetcher, make_http_fetch_tool, system_resolver

PUBLIC = "93.184.216.34"
PUBLIC_2 = "151.101.1.69"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


class FixedResolver:
    """Resolves names from a table; each name may give a different answer per call (DNS rebinding)."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self._table = table
        self.calls: list[str] = []

    async def __call__(self, host: str) -> Sequence[str]:
        self.calls.append(host)
        answers = self._table.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[0] if len(answers) == 1 else answers.pop(0)


class RecordingTransport(httpx.MockTransport):
    """A MockTransport that keeps every request it was sent."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []

        def record(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return handler(request)

        super().__init__(record)


def wire(status: int = 200, body: bytes = b"", content_type: str | None = "text/plain", **extra: str) -> httpx.Response:
    """A response as a real transport returns it: headers now, the body still to be streamed."""
    headers = {name.replace("_", "-"): value for name, value in extra.items()}
    if content_type is not None:
        headers["content-type"] = content_type
    return httpx.Response(status, headers=headers, stream=httpx.ByteStream(body))


def html_page(request: httpx.Request) -> httpx.Response:
    return wire(body=b"<html><head><title>Hi</title></head><body><p>Hello</p></body></html>", content_type="text/html")


RESOLVER_TABLE: dict[str, list[list[str]]] = {
    "example.com": [[PUBLIC]],
    "other.example": [[PUBLIC_2]],
    "v6.example": [[PUBLIC_V6]],
    "internal.example.com": [["10.0.0.5"]],
    "mixed.example.com": [[PUBLIC, "127.0.0.1"]],
    "loop6.example.com": [["::1"]],
    "mapped.example.com": [["::ffff:127.0.0.1"]],
    "metadata.example.com": [["169.254.169.254"]],
    "zone.example.com": [["fe80::1%eth0"]],
    "127.0.0.1.nip.io": [["127.0.0.1"]],
    "garbage.example.com": [["not-an-ip"]],
}


def make_fetcher(
    handler: Callable[[httpx.Request], httpx.Response] = html_page,
    *,
    limits: FetchLimits | None = None,
    table: dict[str, list[list[str]]] | None = None,
) -> tuple[SafeFetcher, RecordingTransport, FixedResolver]:
    transport = RecordingTransport(handler)
    resolver = FixedResolver({k: [list(v) for v in vs] for k, vs in (table or RESOLVER_TABLE).items()})
    fetcher = SafeFetcher(limits or FetchLimits(timeout_s=5), resolver=resolver, transport=transport)
    return fetcher, transport, resolver


async def test_fetches_a_public_page_as_text() -> None:
    fetcher, transport, _ = make_fetcher()
    page = await fetcher.fetch("https://example.com/a?b=1")
    assert page.text == "# Hi\n\nHello"
    assert page.status == 200
    assert page.url == "https://example.com/a?b=1"
    assert len(transport.requests) == 1


async def test_connects_to_the_checked_address_with_the_name_in_host_and_sni() -> None:
    fetcher, transport, _ = make_fetcher()
    await fetcher.fetch("https://example.com:8443/path?q=1")
    (request,) = transport.requests
    assert request.url == httpx.URL(f"https://{PUBLIC}:8443/path?q=1")
    assert request.headers["host"] == "example.com:8443"
    assert request.extensions["sni_hostname"] == "example.com"
    assert request.method == "GET"


async def test_pins_ipv6_addresses_in_brackets() -> None:
    fetcher, transport, _ = make_fetcher()
    await fetcher.fetch("http://v6.example/")
    assert transport.requests[0].url.host == PUBLIC_V6
    assert str(transport.requests[0].url).startswith(f"http://[{PUBLIC_V6}]/")
    assert "sni_hostname" not in transport.requests[0].extensions


async def test_dns_rebinding_cannot_change_the_address_after_the_check() -> None:
    # First answer public, every later answer loopback: the fetcher asks once and connects there.
    table = {"rebind.example": [[PUBLIC], ["127.0.0.1"], ["127.0.0.1"]]}
    fetcher, transport, resolver = make_fetcher(table=table)
    await fetcher.fetch("http://rebind.example/")
    assert resolver.calls == ["rebind.example"]
    assert transport.requests[0].url.host == PUBLIC


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.0.0.1:6379/", "loopback"),
        ("http://10.0.0.1/", "private"),
        ("http://192.168.0.1/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata"),
        ("http://100.100.100.200/latest/meta-data/", "cloud metadata"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://[::1]/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
        ("http://[::ffff:7f00:1]/", "IPv4-mapped"),
        ("http://[::ffff:169.254.169.254]/", "IPv4-mapped"),
        ("http://[2002:7f00:1::]/", "6to4"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("http://2130706433/", "it means 127.0.0.1"),
        ("http://0x7f000001/", "it means 127.0.0.1"),
        ("http://0x7f.1/", "it means 127.0.0.1"),
        ("http://127.1/", "it means 127.0.0.1"),
        ("http://0/", "it means 0.0.0.0"),
        ("http://017700000001/", "it means 127.0.0.1"),
        ("http://0251.0376.0251.0376/", "not a valid URL"),  # httpx itself rejects leading zeros
        ("http://localhost/", "local name"),
        ("http://LOCALHOST./", "local name"),
        ("http://localhost:8000/v1/runs", "local name"),
        ("http://api.localhost/", "local name"),
        ("http://metadata.google.internal/computeMetadata/v1/", "local name"),
        ("http://%31%32%37.0.0.1/", "percent"),
        ("http://internal.example.com/", "resolves to 10.0.0.5"),
        ("http://mixed.example.com/", "resolves to 127.0.0.1"),
        ("http://loop6.example.com/", "resolves to ::1"),
        ("http://mapped.example.com/", "IPv4-mapped"),
        ("http://metadata.example.com/", "cloud metadata"),
        ("http://zone.example.com/", "link-local"),
        ("http://127.0.0.1.nip.io/", "resolves to 127.0.0.1"),
        ("http://garbage.example.com/", "not an address"),
    ],
)
async def test_refuses_internal_targets_without_sending_anything(url: str, reason: str) -> None:
    fetcher, transport, _ = make_fetcher()
    with pytest.raises(FetchRefused, match=reason):
        await fetcher.fetch(url)
    assert transport.requests == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.com/", "only http and https"),
        ("gopher://example.com:6379/_INFO", "only http and https"),
        ("dict://example.com:11211/stat", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("data:text/plain,hello", "only http and https"),
        ("ws://example.com/", "only http and https"),
        ("example.com/path", "only http and https"),
        ("//example.com/x", "only http and https"),
        ("/relative/path", "only http and https"),
        ("http://user:pass@example.com/", "credentials"),
        ("http://example.com@127.0.0.1/", "credentials"),
        ("http:///no-host", "no host"),
        ("http://0177.0.0.1/", "not a valid URL"),
        ("http://[::1/", "not a valid URL"),
        ("http://example.com:99999/", "port 99999 is not valid"),
        ("http://example.com:0/", "port 0 is not valid"),
        ("http://example.com/" + "a" * 3000, "longer than 2048"),
    ],
)
async def test_refuses_other_schemes_credentials_and_malformed_urls(url: str, reason: str) -> None:
    fetcher, transport, _ = make_fetcher()
    with pytest.raises(FetchRefused, match=reason):
        await fetcher.fetch(url)
    assert transport.requests == []


def redirecting(locations: dict[str, str], status: int = 302) -> Callable[[httpx.Request], httpx.Response]:
    """Redirect from each path in `locations`; answer anything else with a page."""

    def handler(request: httpx.Request) -> httpx.Response:
        target = locations.get(request.url.path)
        if target is not None:
            return wire(status, location=target)
        return wire(body=f"landed on {request.headers['host']}{request.url.path}".encode())

    return handler


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://127.0.0.1/admin", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/iam", "cloud metadata"),
        ("http://internal.example.com/", "resolves to 10.0.0.5"),
        ("http://2130706433/", "it means 127.0.0.1"),
        ("http://localhost/", "local name"),
        ("file:///etc/passwd", "only http and https"),
        ("gopher://example.com/", "only http and https"),
        ("http://user:pw@example.com/", "credentials"),
    ],
)
async def test_checks_every_redirect_hop_again(location: str, reason: str) -> None:
    fetcher, transport, _ = make_fetcher(redirecting({"/start": location}))
    with pytest.raises(FetchRefused, match=reason):
        await fetcher.fetch("http://example.com/start")
    assert [str(r.url) for r in transport.requests] == [f"http://{PUBLIC}/start"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_follows_allowed_redirects_resolving_each_host(status: int) -> None:
    fetcher, transport, resolver = make_fetcher(
        redirecting({"/start": "https://other.example/next", "/next": "/final"}, status)
    )
    page = await fetcher.fetch("http://example.com/start")
    assert page.text == "landed on other.example/final"
    assert page.url == "https://other.example/final"
    assert [str(r.url) for r in transport.requests] == [
        f"http://{PUBLIC}/start",
        f"https://{PUBLIC_2}/next",
        f"https://{PUBLIC_2}/final",
    ]
    assert resolver.calls == ["example.com", "other.example", "other.example"]
    assert all(r.method == "GET" for r in transport.requests)


async def test_limits_the_number_of_redirects() -> None:
    chain = {f"/{n}": f"/{n + 1}" for n in range(10)}
    fetcher, transport, _ = make_fetcher(redirecting(chain), limits=FetchLimits(timeout_s=5, max_redirects=3))
    with pytest.raises(FetchRefused, match="more than 3 redirects"):
        await fetcher.fetch("http://example.com/0")
    assert len(transport.requests) == 4
    fetcher, _, _ = make_fetcher(redirecting(chain), limits=FetchLimits(timeout_s=5, max_redirects=3))
    assert (await fetcher.fetch("http://example.com/7")).text == "landed on example.com/10"


async def test_a_redirect_loop_ends_at_the_limit() -> None:
    fetcher, _, _ = make_fetcher(redirecting({"/a": "/b", "/b": "/a"}), limits=FetchLimits(max_redirects=5))
    with pytest.raises(FetchRefused, match="more than 5 redirects"):
        await fetcher.fetch("http://example.com/a")


async def test_cuts_the_body_at_the_size_limit() -> None:
    fetcher, _, _ = make_fetcher(lambda r: wire(body=b"x" * 5000), limits=FetchLimits(max_bytes=1000))
    page = await fetcher.fetch("http://example.com/")
    assert page.truncated
    assert page.text == "x" * 1000


async def test_a_gzip_bomb_is_cut_at_the_limit_after_decompression() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)  # 50 MB of zeros in about 50 kB
    assert len(bomb) < 100_000
    fetcher, _, _ = make_fetcher(
        lambda r: wire(body=bomb, content_encoding="gzip"),
        limits=FetchLimits(max_bytes=10_000),
    )
    page = await fetcher.fetch("http://example.com/")
    assert page.truncated
    assert len(page.text) == 10_000


async def test_decodes_deflate_within_the_limit() -> None:
    body = zlib.compress(b"hello deflate")
    fetcher, _, _ = make_fetcher(lambda r: wire(body=body, content_encoding="deflate"))
    assert (await fetcher.fetch("http://example.com/")).text == "hello deflate"


async def test_refuses_unsupported_content_encodings() -> None:
    fetcher, _, _ = make_fetcher(lambda r: wire(body=b"??", content_encoding="br"))
    with pytest.raises(FetchFailed, match="content encoding 'br'"):
        await fetcher.fetch("http://example.com/")


async def test_a_server_that_never_answers_hits_the_deadline() -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(60)
        raise AssertionError("unreachable")

    fetcher = SafeFetcher(
        FetchLimits(timeout_s=0.05), resolver=FixedResolver(RESOLVER_TABLE), transport=httpx.MockTransport(hang)
    )
    with pytest.raises(FetchFailed, match=r"longer than 0\.05 s"):
        await fetcher.fetch("http://example.com/")


async def test_a_body_that_drips_forever_hits_the_deadline() -> None:
    async def drip() -> AsyncIterator[bytes]:
        while True:
            yield b"x"
            await asyncio.sleep(0.01)

    fetcher = SafeFetcher(
        FetchLimits(timeout_s=0.2, max_bytes=10_000_000),
        resolver=FixedResolver(RESOLVER_TABLE),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=drip())),
    )
    with pytest.raises(FetchFailed, match=r"longer than 0\.2 s"):
        await fetcher.fetch("http://example.com/")


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (wire(404), "answered 404 Not Found"),
        (wire(500), "answered 500"),
        (wire(body=b"\x89PNG", content_type="image/png"), "image/png, not text"),
        (wire(body=b"%PDF", content_type="application/pdf"), "not text"),
        (wire(body=b"\x00\x01\x02", content_type=None), "binary data"),
    ],
)
async def test_reports_error_statuses_and_non_text_bodies(response: httpx.Response, reason: str) -> None:
    fetcher, _, _ = make_fetcher(lambda r: response)
    with pytest.raises(FetchFailed, match=reason):
        await fetcher.fetch("http://example.com/")


async def test_reports_names_that_do_not_resolve_and_connection_errors() -> None:
    fetcher, _, _ = make_fetcher()
    with pytest.raises(FetchFailed, match=r"cannot resolve 'nowhere\.example'"):
        await fetcher.fetch("http://nowhere.example/")

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    fetcher, _, _ = make_fetcher(refuse)
    with pytest.raises(FetchFailed, match="ConnectError"):
        await fetcher.fetch("http://example.com/")


async def test_returns_json_and_plain_text_as_they_are() -> None:
    fetcher, _, _ = make_fetcher(lambda r: wire(body=b'{"a": [1, 2]}', content_type="application/json"))
    assert (await fetcher.fetch("http://example.com/")).text == '{"a": [1, 2]}'
    fetcher, _, _ = make_fetcher(
        lambda r: wire(body="café".encode("latin-1"), content_type="text/plain; charset=latin-1")
    )
    assert (await fetcher.fetch("http://example.com/")).text == "café"


async def test_the_tool_shows_where_the_text_came_from_and_marks_truncation() -> None:
    fetcher, _, _ = make_fetcher(
        lambda r: wire(body=b"y" * 50),
        limits=FetchLimits(max_bytes=10),
    )
    http_fetch = make_http_fetch_tool(fetcher)
    assert await http_fetch("http://example.com/doc") == (
        "URL: http://example.com/doc\nStatus: 200\nContent-Type: text/plain\n\nyyyyyyyyyy\n[body cut at the size limit]"
    )


async def test_the_default_resolver_and_transport_refuse_before_any_connection() -> None:
    # No resolver or transport injected: the production path, stopped at the check.
    fetcher = SafeFetcher(FetchLimits(timeout_s=1))
    for url in ("http://127.0.0.1:9/", "http://[::1]:9/", "http://0x7f000001:9/", "http://localhost:9/"):
        with pytest.raises(FetchRefused):
            await fetcher.fetch(url)


async def test_the_system_resolver_returns_address_literals_unchanged() -> None:
    # An address literal is answered without any lookup, so no packet leaves the machine.
    assert await system_resolver("93.184.216.34") == ["93.184.216.34"]
