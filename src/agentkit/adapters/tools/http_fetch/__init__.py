"""http_fetch: GET over http(s), public addresses only, pinned connections, checked redirects."""

from agentkit.adapters.tools.http_fetch.addresses import address_problem, host_problem, legacy_ipv4
from agentkit.adapters.tools.http_fetch.fetcher import FetchedPage, FetchLimits, SafeFetcher
from agentkit.adapters.tools.http_fetch.html_text import html_to_text
from agentkit.adapters.tools.http_fetch.targets import CheckedURL, Resolver, system_resolver
from agentkit.adapters.tools.http_fetch.tool import make_http_fetch_tool

__all__ = [
    "CheckedURL",
    "FetchLimits",
    "FetchedPage",
    "Resolver",
    "SafeFetcher",
    "address_problem",
    "host_problem",
    "html_to_text",
    "legacy_ipv4",
    "make_http_fetch_tool",
    "system_resolver",
]
