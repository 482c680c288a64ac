"""One URL checked against the SSRF rules, and the address to connect to: http_fetch's and the webhooks'.

1. http or https only, no credentials, a valid port, a plain host name or dotted-decimal address;
2. every address the host resolves to is public (see `addresses`), loopback too when the caller
   allows it (webhooks to a local receiver, with WEBHOOK_ALLOW_LOOPBACK);
3. the first address is the one to connect to: the caller pins its connection there.

Refusals carry a reason in plain words; each caller wraps it in its own error.
"""

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import httpx
import msgspec

from agentkit.adapters.tools.http_fetch.addresses import IPAddress, address_problem, host_problem, literal_address

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""Resolves a host name to the IP addresses (as strings) it would connect to."""

MAX_URL_CHARS: Final = 2048
_LOCAL_NAMES: Final = frozenset({"localhost"})


class TargetRefused(Exception):
    """The URL, or an address its host resolves to, is not allowed; the message says why."""


class TargetUnresolved(Exception):
    """The URL's host does not resolve (now)."""


class CheckedURL(msgspec.Struct, frozen=True, kw_only=True):
    """A URL that passed every check, and the address the request will be sent to."""

    url: httpx.URL
    address: str


def pinned_request(
    client: httpx.AsyncClient, method: str, target: CheckedURL, headers: dict[str, str], content: bytes | None = None
) -> httpx.Request:
    """A request to the checked address itself, the name kept in Host and as the TLS server name.

    Certificates are still verified against the name; DNS cannot answer differently between the
    check and the connect, since nothing resolves the name again.
    """
    extensions = {"sni_hostname": target.url.raw_host.decode("ascii")} if target.url.scheme == "https" else {}
    return client.build_request(
        method,
        target.url.copy_with(host=target.address),
        headers={"Host": target.url.netloc.decode("ascii"), **headers},
        content=content,
        extensions=extensions,
    )


async def system_resolver(host: str) -> list[str]:
    """The operating system's resolver (getaddrinfo), without blocking the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_url(
    url: str,
    *,
    resolve: Resolver,
    allow_loopback: bool = False,
    resolve_timeout_s: float | None = None,
) -> CheckedURL:
    """Check one URL and choose the address to connect to.

    Args:
        url: The URL.
        resolve: Host name to addresses.
        allow_loopback: Let loopback addresses and `localhost` through (private, link-local and
            metadata addresses stay refused).
        resolve_timeout_s: How long the lookup may take (None: the resolver's own limit).

    Raises:
        TargetRefused: the URL or any address of its host is not allowed.
        TargetUnresolved: the host does not resolve.
    """
    parsed = _parse(url)
    host = parsed.raw_host.decode("ascii").lower().removesuffix(".")
    literal = literal_address(host)
    addresses: list[IPAddress]
    if literal is not None:
        addresses = [literal]
    else:
        problem = host_problem(host)
        if problem is not None and not (allow_loopback and host in _LOCAL_NAMES):
            raise TargetRefused(problem)
        addresses = [_resolved(host, found) for found in await _resolve(host, resolve, resolve_timeout_s)]
    for address in addresses:
        problem = None if allow_loopback and address.is_loopback else address_problem(address)
        if problem is not None:
            shown = host if literal is not None else f"{host} resolves to {address}, which"
            raise TargetRefused(f"{shown} is {problem}; only public addresses are allowed")
    return CheckedURL(url=parsed, address=str(addresses[0]))


def _parse(url: str) -> httpx.URL:
    if len(url) > MAX_URL_CHARS:
        raise TargetRefused(f"the URL is longer than {MAX_URL_CHARS} characters")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise TargetRefused(f"not a valid URL: {exc}") from None
    if parsed.scheme not in ("http", "https"):
        raise TargetRefused(f"only http and https URLs are allowed, not {parsed.scheme or 'a relative URL'!r}")
    if parsed.userinfo:
        raise TargetRefused("the URL may not hold credentials (user:password@)")
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise TargetRefused(f"the port {parsed.port} is not valid")
    if not parsed.raw_host:
        raise TargetRefused("the URL has no host")
    return parsed


async def _resolve(host: str, resolve: Resolver, timeout_s: float | None) -> Sequence[str]:
    try:
        async with asyncio.timeout(timeout_s):
            found = await resolve(host)
    except TimeoutError:
        raise TargetUnresolved(f"{host!r} did not resolve within {timeout_s:g} s") from None
    except OSError as exc:
        raise TargetUnresolved(f"cannot resolve {host!r}: {exc}") from None
    if not found:
        raise TargetUnresolved(f"{host!r} has no addresses")
    return found


def _resolved(host: str, found: str) -> IPAddress:
    address = literal_address(found.split("%", 1)[0])
    if address is None:
        raise TargetRefused(f"{host!r} resolved to something that is not an address: {found!r}")
    return address
