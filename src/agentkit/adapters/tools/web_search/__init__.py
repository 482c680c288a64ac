"""web_search: a search API behind a small port (Brave by default, Tavily as an alternative)."""

from agentkit.adapters.tools.web_search.brave import BraveSearchBackend
from agentkit.adapters.tools.web_search.port import SearchBackend, SearchResult
from agentkit.adapters.tools.web_search.tavily import TavilySearchBackend
from agentkit.adapters.tools.web_search.tool import SEARCH_PROVIDERS, make_search_backend, make_web_search_tool

__all__ = [
    "SEARCH_PROVIDERS",
    "BraveSearchBackend",
    "SearchBackend",
    "SearchResult",
    "TavilySearchBackend",
    "make_search_backend",
    "make_web_search_tool",
]
