"""Brave Search API (free tier available): GET /res/v1/web/search with X-Subscription-Token."""

import httpx
import msgspec

from agentkit.adapters.tools.web_search._http import clip, request_json
from agentkit.adapters.tools.web_search.port import SearchBackend, SearchResult

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
BRAVE_MAX_COUNT = 20  # the API's own limit per request


class _BraveHit(msgspec.Struct):
    title: str = ""
    url: str = ""
    description: str = ""


class _BraveWeb(msgspec.Struct):
    results: list[_BraveHit] = []


class _BraveResponse(msgspec.Struct):
    web: _BraveWeb | None = None


class BraveSearchBackend(SearchBackend):
    """Web results from Brave Search."""

    def __init__(self, api_key: str, *, timeout_s: float = 10.0, transport: httpx.AsyncBaseTransport | None = None):
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._transport = transport

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` web results for `query`."""
        request = httpx.Request(
            "GET",
            BRAVE_URL,
            params={"q": query, "count": min(count, BRAVE_MAX_COUNT)},
            headers={"Accept": "application/json", "X-Subscription-Token": self._api_key},
        )
        body = await request_json("Brave Search", self._transport, self._timeout_s, request, _BraveResponse)
        hits = body.web.results if body.web is not None else []
        return [
            SearchResult(title=clip(hit.title, 200), url=hit.url, snippet=clip(hit.description))
            for hit in hits[:count]
            if hit.url
        ]
