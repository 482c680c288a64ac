"""WebhookURLGuard: http_fetch's SSRF rules for callback URLs, at request time and again at send time.

The same rules as `adapters.tools.http_fetch` (its `targets.check_url` is used as it is):
http or https only, no credentials, a plain host name or a dotted-decimal address, and every
address the host resolves to public. One exception, off by default: WEBHOOK_ALLOW_LOOPBACK lets
loopback addresses (and `localhost`) through, so tests and a local receiver can be reached. Private,
link-local and cloud-metadata addresses are refused whatever it says.
"""

from collections.abc import Mapping, Sequence
from typing import Final

from agentkit.adapters.tools.http_fetch.targets import (
    CheckedURL,
    TargetRefused,
    TargetUnresolved,
    check_url,
    system_resolver,
)
from agentkit.application.errors import InvalidCallbackURL
from agentkit.application.ports.callback_url_guard import CallbackURLGuard

# A resolver that hangs must not hold a request (or a sender's place) for the system's own timeouts.
RESOLVE_TIMEOUT_S: Final = 5.0


class TargetUnresolvable(InvalidCallbackURL):
    """The callback's host does not resolve (now): at send time, worth another attempt later."""


class HostResolver:
    """Host name to the addresses a connection would go to: the operating system's resolver."""

    async def resolve(self, host: str) -> Sequence[str]:
        """The host's addresses (getaddrinfo, off the event loop).

        Raises:
            OSError: the name does not resolve.
        """
        return await system_resolver(host)


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

    async def target(self, url: str) -> CheckedURL:
        """The checked URL and the address to send to (http_fetch's `check_url`).

        Raises:
            TargetUnresolvable: the host does not resolve.
            InvalidCallbackURL: any other refusal.
        """
        try:
            return await check_url(
                url,
                resolve=self._resolver.resolve,
                allow_loopback=self._allow_loopback,
                resolve_timeout_s=RESOLVE_TIMEOUT_S,
            )
        except TargetRefused as exc:
            raise InvalidCallbackURL(f"callback_url: {exc}") from None
        except TargetUnresolved as exc:
            raise TargetUnresolvable(f"callback_url: {exc}") from None
