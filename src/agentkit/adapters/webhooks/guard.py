"""WebhookURLGuard: http_fetch's SSRF rules for callback URLs, at request time and again at send time.

The same rules as `adapters.tools.http_fetch` (its address and host checks are used as they are):
http or https only, no credentials, a plain host name or a dotted-decimal address, and every
address the host resolves to public. One exception, off by default: WEBHOOK_ALLOW_LOOPBACK lets
loopback addresses (and `localhost`) through, so tests and a local receiver can be reached. Private,
link-local and cloud-metadata addresses are refused whatever it says.
"""

import asyncio
import ipaddress
import socket
from collections.abc import Mapping, Sequence
from typing import Final

import httpx
import msgspec

from agentkit.adapters.tools.http_fetch.addresses import address_problem, host_problem, literal_address
from agentkit.application.errors import InvalidCallbackURL
from agentkit.application.ports.callback_url_guard import CallbackURLGuard

MAX_URL_CHARS: Final = 2048
# A resolver that hangs must not hold a request (or a sender's place) for the system's own timeouts.
RESOLVE_TIMEOUT_S: Final = 5.0
_LOCAL_NAMES: Final = frozenset({"localhost"})


class TargetUnresolvable(InvalidCallbackURL):
    """The callback's host does not resolve (now): at send time, worth another attempt later."""


class HostResolver:
    """Host name to the addresses a connection would go to: the operating system's resolver."""

    async def resolve(self, host: str) -> Sequence[str]:
        """The host's addresses (getaddrinfo, off the event loop).

        Raises:
            OSError: the name does not resolve.
        """
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
        return list(dict.fromkeys(str(info[4][0]) for info in infos))


class FixedHostResolver(HostResolver):
    """Names resolved from a table: tests map a test host name to the address they want checked.

    The table is read at each lookup (not copied), so a test can change what a name resolves to.
    """

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self._table = table

    async def resolve(self, host: str) -> Sequence[str]:
        """The table's addresses for the host (names in lower case); an unknown host does not resolve."""
        found = self._table.get(host)
        if found is None:
            raise OSError(f"{host!r} is not in the resolver's table")
        return found


class CheckedTarget(msgspec.Struct, frozen=True, kw_only=True):
    """A callback URL that passed every check, and the address the POST is sent to."""

    url: httpx.URL
    address: str


class WebhookURLGuard(CallbackURLGuard):
    """Checks callback URLs; `target` also picks the address to connect to (the connection is pinned to it).

    Args:
        resolver: Host names to addresses.
        allow_loopback: Let loopback addresses through (WEBHOOK_ALLOW_LOOPBACK; tests, local receivers).
    """

    def __init__(self, *, resolver: HostResolver | None = None, allow_loopback: bool = False) -> None:
        self._resolver = resolver or HostResolver()
        self._allow_loopback = allow_loopback

    async def check(self, url: str) -> None:
        """Accept the URL or raise InvalidCallbackURL (see the port)."""
        await self.target(url)

    async def target(self, url: str) -> CheckedTarget:
        """The checked URL and the address to send to.

        Raises:
            TargetUnresolvable: the host does not resolve.
            InvalidCallbackURL: any other refusal.
        """
        parsed = self._parse(url)
        host = parsed.raw_host.decode("ascii").lower().removesuffix(".")
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            problem = host_problem(host)
            if problem is not None and not (self._allow_loopback and host in _LOCAL_NAMES):
                raise InvalidCallbackURL(f"callback_url: {problem}")
            addresses = [self._address(host, found) for found in await self._resolve(host)]
        for address in addresses:
            problem = self._problem(address)
            if problem is not None:
                shown = host if literal is not None else f"{host} resolves to {address}, which"
                raise InvalidCallbackURL(f"callback_url: {shown} is {problem}; webhooks go to public addresses only")
        return CheckedTarget(url=parsed, address=str(addresses[0]))

    def _parse(self, url: str) -> httpx.URL:
        if len(url) > MAX_URL_CHARS:
            raise InvalidCallbackURL(f"callback_url is longer than {MAX_URL_CHARS} characters")
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise InvalidCallbackURL(f"callback_url is not a valid URL: {exc}") from None
        if parsed.scheme not in ("http", "https"):
            raise InvalidCallbackURL(f"callback_url must be http or https, not {parsed.scheme or 'a relative URL'!r}")
        if parsed.userinfo:
            raise InvalidCallbackURL("callback_url may not hold credentials (user:password@)")
        if not parsed.raw_host:
            raise InvalidCallbackURL("callback_url has no host")
        return parsed

    def _problem(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
        if self._allow_loopback and address.is_loopback:
            return None
        return address_problem(address)

    async def _resolve(self, host: str) -> Sequence[str]:
        try:
            async with asyncio.timeout(RESOLVE_TIMEOUT_S):
                found = await self._resolver.resolve(host)
        except TimeoutError:
            raise TargetUnresolvable(f"callback_url: {host!r} did not resolve within {RESOLVE_TIMEOUT_S:g} s") from None
        except OSError as exc:
            raise TargetUnresolvable(f"callback_url: cannot resolve {host!r}: {exc}") from None
        if not found:
            raise TargetUnresolvable(f"callback_url: {host!r} has no addresses")
        return found

    @staticmethod
    def _address(host: str, found: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        address = literal_address(found.split("%", 1)[0])
        if address is None:
            raise InvalidCallbackURL(f"callback_url: {host!r} resolved to something that is not an address: {found!r}")
        return address
