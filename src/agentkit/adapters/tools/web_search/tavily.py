"""Tavily Search API (free tier available): POST /search with a Bearer key."""

import httpx
import msgspec

from agentkit.adapters.tools.web_search._http import clip, request_json
from agentkit.adapters.tools.web_search.port import SearchBackend, SearchResult

TAVILY_URL = "https://api.tavily.com/search"
TAVILY_MAX_COUNT = 20


class _TavilyHit(msgspec.Struct):
    title: str = ""
    url: str = ""
    content: str = ""


class _TavilyResponse(msgspec.Struct):
    results: list[_TavilyHit] = []


class TavilySearchBackend(SearchBackend):
    """Web results from Tavily."""

    def __init__(self, api_key: str, *, timeout_s: float = 10.0, transport: httpx.AsyncBaseTransport | None = None):
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._transport = transport

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` web results for `query`."""
        request = httpx.Request(
            "POST",
            TAVILY_URL,
            json={"query": query, "max_results": min(count, TAVILY_MAX_COUNT)},
            headers={"Accept": "application/json", "Authorization": f"Bearer {self._api_key}"},
        )
        body = await request_json("Tavily", self._transport, self._timeout_s, request, _TavilyResponse)
        return [
            SearchResult(title=clip(hit.title, 200), url=hit.url, snippet=clip(hit.content))
            for hit in body.results[:count]
            if hit.url
        ]
