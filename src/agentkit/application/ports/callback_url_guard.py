"""The CallbackURLGuard port: whether AgentKit may POST a run's webhooks to a URL."""

from abc import abstractmethod
from typing import Protocol


class CallbackURLGuard(Protocol):
    """The same SSRF rules as http_fetch: http(s) only, and every address the host resolves to is public.

    Loopback addresses are allowed only where the service is configured to (WEBHOOK_ALLOW_LOOPBACK,
    for tests and local development).
    """

    @abstractmethod
    async def check(self, url: str) -> None:
        """Accept the URL, or refuse it.

        Raises:
            InvalidCallbackURL: not http(s), too long, malformed, or its host is or resolves to a
                refused address (or does not resolve).
        """
