"""The search port: a query in, a few results out. One adapter per search API."""

from abc import abstractmethod
from typing import Protocol

import msgspec


class SearchResult(msgspec.Struct, frozen=True, kw_only=True):
    """One search hit."""

    title: str
    url: str
    snippet: str = ""


class SearchBackend(Protocol):
    """A web search API."""

    @abstractmethod
    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Return at most `count` results for `query`.

        Raises:
            SearchFailed: the provider refused the request or did not answer usefully.
        """
