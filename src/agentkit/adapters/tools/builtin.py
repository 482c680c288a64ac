"""The five built-in tools, built from one small configuration (the composition root fills it in)."""

from pathlib import Path
from typing import Any

import httpx
import msgspec

from agentkit.adapters.tools.calculator import CalculatorLimits, make_calculator_tool
from agentkit.adapters.tools.http_fetch import FetchLimits, Resolver, SafeFetcher, make_http_fetch_tool, system_resolver
from agentkit.adapters.tools.read_file import make_read_file_tool
from agentkit.adapters.tools.sql_readonly import ReadOnlyQueryRunner, make_sql_readonly_tool
from agentkit.adapters.tools.web_search import make_search_backend, make_web_search_tool
from agentkit.application.tools import Tool


class SearchConfig(msgspec.Struct, frozen=True, kw_only=True):
    """web_search: which API, its key (None: the tool answers with a configuration error) and limits."""

    provider: str = "brave"
    api_key: str | None = None
    max_results: int = 5
    timeout_s: float = 10.0


class BuiltinToolsConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The limits and keys of the built-in tools (see docs/tools.md).

    Attributes:
        calculator: The calculator's bounds.
        fetch: http_fetch's deadline, size and redirect limits.
        search: web_search's API.
        file_base_dir: The only folder read_file reads from.
        file_max_bytes: The largest file read_file returns.
        sql_row_limit: The most rows sql_readonly returns.
    """

    calculator: CalculatorLimits = CalculatorLimits()
    fetch: FetchLimits = FetchLimits()
    search: SearchConfig = SearchConfig()
    file_base_dir: str = "./data/files"
    file_max_bytes: int = 1_000_000
    sql_row_limit: int = 100


def build_builtin_tools(
    config: BuiltinToolsConfig,
    *,
    sql_runner: ReadOnlyQueryRunner | None = None,
    resolver: Resolver = system_resolver,
    fetch_transport: httpx.AsyncBaseTransport | None = None,
    search_transport: httpx.AsyncBaseTransport | None = None,
) -> list[Tool[..., Any]]:
    """calculator, sql_readonly, read_file, http_fetch and web_search, with these limits.

    Args:
        config: The limits and keys.
        sql_runner: Runs sql_readonly's queries; without one, sql_readonly is left out, since there
            is no demo database to query.
        resolver: http_fetch's DNS resolver (tests pass a fake one).
        fetch_transport: http_fetch's httpx transport (tests pass `httpx.MockTransport`).
        search_transport: web_search's httpx transport (tests pass `httpx.MockTransport`).

    Raises:
        ConfigurationError: SEARCH_PROVIDER names an unknown provider.
    """
    fetcher = SafeFetcher(config.fetch, resolver=resolver, transport=fetch_transport)
    search = config.search
    backend = make_search_backend(
        search.provider, search.api_key, timeout_s=search.timeout_s, transport=search_transport
    )
    tools: list[Tool[..., Any]] = [make_calculator_tool(config.calculator)]
    if sql_runner is not None:
        tools.append(make_sql_readonly_tool(sql_runner, row_limit=config.sql_row_limit))
    tools.append(make_read_file_tool(Path(config.file_base_dir), config.file_max_bytes))
    tools.append(make_http_fetch_tool(fetcher))
    tools.append(make_web_search_tool(backend, max_results=search.max_results, provider=search.provider))
    return tools
