"""SafeFetcher: GET a URL on the public internet and nothing else.

For each hop (the first request and every redirect):
1. the URL must be http or https, without credentials, with a plain host name or address;
2. every address the host resolves to must be public (see `addresses`);
3. the connection goes to the checked address itself: the request is sent to the IP with the
   name in the Host header and as the TLS server name (certificates are still verified against
   the name), so DNS cannot answer differently between the check and the connect;
4. redirects are followed by hand, each one checked again, up to the hop limit.
One deadline covers all hops and the body; the body is read within a byte budget.
No proxy from the environment is used: a proxy would resolve the name itself.
"""

import asyncio

import httpx
import msgspec

from agentkit.adapters.tools.errors import FetchFailed, FetchRefused
from agentkit.adapters.tools.http_fetch.body import body_to_text, read_limited
from agentkit.adapters.tools.http_fetch.targets import (
    CheckedURL,
    Resolver,
    TargetRefused,
    TargetUnresolved,
    check_url,
    pinned_request,
    system_resolver,
)

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Limits of one fetch: a deadline for everything, a decoded-byte budget, a redirect count."""

    timeout_s: float = 10.0
    max_bytes: int = 2_000_000
    max_redirects: int = 5


class FetchedPage(msgspec.Struct, frozen=True, kw_only=True):
    """A fetched response as text."""

    url: str
    status: int
    content_type: str
    text: str
    truncated: bool


class SafeFetcher:
    """Fetches public http(s) URLs with every SSRF rule applied; see the module docstring.

    Args:
        limits: Time, size and redirect limits.
        resolver: Host name to addresses; tests pass a dictionary lookup.
        transport: The httpx transport; tests pass `httpx.MockTransport`. By default a fresh
            transport per fetch, without keep-alive, so a connection opened for one name is
            never reused for another name on the same address.
        user_agent: The User-Agent header.
    """

    def __init__(
        self,
        limits: FetchLimits,
        *,
        resolver: Resolver = system_resolver,
        transport: httpx.AsyncBaseTransport | None = None,
        user_agent: str = "AgentKit-http_fetch/0.1",
    ) -> None:
        self._limits = limits
        self._resolver = resolver
        self._transport = transport
        self._user_agent = user_agent

    async def fetch(self, url: str) -> FetchedPage:
        """GET `url` and return its text.

        Raises:
            FetchRefused: the URL, an address, or a redirect target is not allowed.
            FetchFailed: a timeout, a connection error, an error status or a non-text body.
        """
        transport = self._transport or httpx.AsyncHTTPTransport(
            limits=httpx.Limits(max_keepalive_connections=0), retries=0
        )
        client = httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False)
        try:
            async with asyncio.timeout(self._limits.timeout_s), client:
                return await self._follow(client, url)
        except (TimeoutError, httpx.TimeoutException):
            raise FetchFailed(f"the fetch took longer than {self._limits.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise FetchFailed(f"the request failed: {type(exc).__name__}: {exc}") from None

    async def _follow(self, client: httpx.AsyncClient, url: str) -> FetchedPage:
        current = url
        for hop in range(self._limits.max_redirects + 1):
            target = await self.check(current)
            response = await client.send(self._pinned_request(client, target), stream=True)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    if hop == self._limits.max_redirects:
                        raise FetchRefused(f"more than {self._limits.max_redirects} redirects")
                    current = str(target.url.join(location))
                    continue
                if response.status_code >= 400:
                    raise FetchFailed(f"the server answered {response.status_code} {response.reason_phrase}")
                body, truncated = await read_limited(response, self._limits.max_bytes)
            finally:
                await response.aclose()
            content_type = response.headers.get("content-type", "")
            return FetchedPage(
                url=str(target.url),
                status=response.status_code,
                content_type=content_type,
                text=body_to_text(body, content_type),
                truncated=truncated,
            )
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def check(self, url: str) -> CheckedURL:
        """Check one URL and choose the address to connect to (see `targets.check_url`).

        Raises:
            FetchRefused: the URL or any address of its host is not allowed.
            FetchFailed: the host does not resolve.
        """
        try:
            return await check_url(url, resolve=self._resolver)
        except TargetRefused as exc:
            raise FetchRefused(str(exc)) from None
        except TargetUnresolved as exc:
            raise FetchFailed(str(exc)) from None

    def _pinned_request(self, client: httpx.AsyncClient, target: CheckedURL) -> httpx.Request:
        headers = {
            "User-Agent": self._user_agent,
            "Accept": "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1",
            "Accept-Encoding": "gzip, deflate",
        }
        return pinned_request(client, "GET", target, headers)
