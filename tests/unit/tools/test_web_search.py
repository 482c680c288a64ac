"""web_search: Brave and Tavily through MockTransport, the result limit, and a clear error without a key."""

import json

import httpx
import pytest

from agentkit.adapters.tools.errors import SearchFailed
from agentkit.adapters.tools.web_search import (
    BraveSearchBackend,
    SearchBackend,
    SearchResult,
    TavilySearchBackend,
    make_search_backend,
    make_web_search_tool,
)
from agentkit.application.errors import ConfigurationError

BRAVE_BODY = {
    "type": "search",
    "query": {"original": "agentkit"},
    "web": {
        "type": "search",
        "results": [
            {"title": f"Result {n}", "url": f"https://example.com/{n}", "description": f"<strong>Snippet</strong> {n}"}
            for n in range(1, 11)
        ],
    },
}
TAVILY_BODY = {
    "query": "agentkit",
    "results": [
        {"title": f"T{n}", "url": f"https://example.org/{n}", "content": "  many\n   spaces  ", "score": 0.9}
        for n in range(1, 6)
    ],
}


class Recorder:
    """A MockTransport handler answering with one response and keeping the requests."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.response

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


async def test_brave_sends_the_key_and_count_and_maps_results() -> None:
    recorder = Recorder(httpx.Response(200, json=BRAVE_BODY))
    backend = BraveSearchBackend("brave-key", transport=recorder.transport)
    results = await backend.search("agentkit docs", 3)
    (request,) = recorder.requests
    assert request.method == "GET"
    assert request.url.host == "api.search.brave.com"
    assert request.url.path == "/res/v1/web/search"
    assert request.url.params["q"] == "agentkit docs"
    assert request.url.params["count"] == "3"
    assert request.headers["x-subscription-token"] == "brave-key"
    assert results[0] == SearchResult(
        title="Result 1", url="https://example.com/1", snippet="<strong>Snippet</strong> 1"
    )
    assert len(results) == 3


async def test_tavily_posts_the_query_with_a_bearer_key() -> None:
    recorder = Recorder(httpx.Response(200, json=TAVILY_BODY))
    backend = TavilySearchBackend("tvly-key", transport=recorder.transport)
    results = await backend.search("agentkit", 2)
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == "https://api.tavily.com/search"
    assert request.headers["authorization"] == "Bearer tvly-key"
    assert json.loads(request.content) == {"query": "agentkit", "max_results": 2}
    assert results == [
        SearchResult(title="T1", url="https://example.org/1", snippet="many spaces"),
        SearchResult(title="T2", url="https://example.org/2", snippet="many spaces"),
    ]


async def test_brave_without_web_results_is_an_empty_list() -> None:
    backend = BraveSearchBackend("k", transport=Recorder(httpx.Response(200, json={"type": "search"})).transport)
    assert await backend.search("nothing", 5) == []


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(401, json={}), "rejected the API key"),
        (httpx.Response(403), "rejected the API key"),
        (httpx.Response(429), "too many requests"),
        (httpx.Response(503), "answered HTTP 503"),
        (httpx.Response(200, content=b"<html>not json</html>"), "unexpected response"),
        (httpx.Response(200, json={"web": {"results": "not a list"}}), "unexpected response"),
    ],
)
async def test_provider_failures_become_clear_errors(response: httpx.Response, message: str) -> None:
    backend = BraveSearchBackend("k", transport=Recorder(response).transport)
    with pytest.raises(SearchFailed, match=message):
        await backend.search("q", 5)


async def test_network_errors_and_timeouts_become_clear_errors() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("down", request=request)

    with pytest.raises(SearchFailed, match="did not answer within 2 s"):
        await TavilySearchBackend("k", timeout_s=2, transport=httpx.MockTransport(timeout)).search("q", 1)
    with pytest.raises(SearchFailed, match="cannot reach Tavily"):
        await TavilySearchBackend("k", transport=httpx.MockTransport(down)).search("q", 1)


class FixedSearch(SearchBackend):
    """Returns as many canned results as asked for, and records the counts asked for."""

    def __init__(self) -> None:
        self.counts: list[int] = []

    async def search(self, query: str, count: int) -> list[SearchResult]:
        self.counts.append(count)
        return [SearchResult(title=f"R{n}", url=f"https://r.example/{n}", snippet="s") for n in range(count)]


async def test_the_tool_caps_the_count_at_the_configured_limit() -> None:
    backend = FixedSearch()
    web_search = make_web_search_tool(backend, max_results=3, provider="brave")
    text = await web_search("agentkit", 50)
    assert backend.counts == [3]
    assert text == "\n".join(f"{n + 1}. R{n}\n   https://r.example/{n}\n   s" for n in range(3))
    await web_search("agentkit", 0)
    assert backend.counts[-1] == 1
    assert web_search.schema.parameters["properties"]["count"]["default"] == 3


async def test_the_tool_without_a_key_says_how_to_configure_it() -> None:
    web_search = make_web_search_tool(None, max_results=5, provider="tavily")
    with pytest.raises(
        SearchFailed, match=r"web_search is not configured: set SEARCH_API_KEY .*SEARCH_PROVIDER=tavily"
    ):
        await web_search("anything")


async def test_the_tool_refuses_an_empty_query() -> None:
    with pytest.raises(SearchFailed, match="empty"):
        await make_web_search_tool(FixedSearch(), max_results=5, provider="brave")("   ")


@pytest.mark.parametrize(("provider", "kind"), [("brave", BraveSearchBackend), (" Tavily ", TavilySearchBackend)])
def test_the_provider_setting_picks_the_backend(provider: str, kind: type[SearchBackend]) -> None:
    assert isinstance(make_search_backend(provider, "key"), kind)
    assert make_search_backend(provider, None) is None
    assert make_search_backend(provider, "") is None


def test_an_unknown_provider_fails_start_up_naming_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="SEARCH_PROVIDER: 'bing' is not one of brave, tavily"):
        make_search_backend("bing", "key")
