"""The five built-in tools, configured from the settings; the container's one call."""

from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.engine import URL

from agentkit.adapters.demo import demo_reader_dsn
from agentkit.adapters.tools.calculator import CalculatorLimits, make_calculator_tool
from agentkit.adapters.tools.http_fetch import FetchLimits, Resolver, SafeFetcher, make_http_fetch_tool, system_resolver
from agentkit.adapters.tools.read_file import make_read_file_tool
from agentkit.adapters.tools.sql_readonly import AsyncpgReadOnlyQueryRunner, ReadOnlyQueryRunner, make_sql_readonly_tool
from agentkit.adapters.tools.web_search import make_search_backend, make_web_search_tool
from agentkit.application.settings import Settings
from agentkit.application.tools import Tool


def make_sql_runner(settings: Settings, admin_url: str | URL | None = None) -> AsyncpgReadOnlyQueryRunner:
    """The read-only query runner for sql_readonly; its pool opens on the first query.

    Args:
        settings: SQL_ROW_LIMIT, SQL_STATEMENT_TIMEOUT_MS and the URL settings.
        admin_url: AgentKit's own database URL (the embedded server's, say), from which the
            reader's URL is derived unless DATABASE_READONLY_URL is set (see `demo_reader_dsn`).

    The caller owns it: `await runner.aclose()` when the container closes.
    """
    return AsyncpgReadOnlyQueryRunner(
        demo_reader_dsn(settings, admin_url),
        row_limit=settings.sql_row_limit,
        statement_timeout_ms=settings.sql_statement_timeout_ms,
    )


def build_builtin_tools(
    settings: Settings,
    *,
    sql_runner: ReadOnlyQueryRunner | None = None,
    resolver: Resolver = system_resolver,
    fetch_transport: httpx.AsyncBaseTransport | None = None,
    search_transport: httpx.AsyncBaseTransport | None = None,
) -> list[Tool[..., Any]]:
    """calculator, sql_readonly, read_file, http_fetch and web_search, with the settings' limits.

    Args:
        settings: The limits and keys (see docs/tools.md).
        sql_runner: Runs sql_readonly's queries (`make_sql_runner`); without one, sql_readonly
            is left out, since there is no demo database to query.
        resolver: http_fetch's DNS resolver (tests pass a fake one).
        fetch_transport: http_fetch's httpx transport (tests pass `httpx.MockTransport`).
        search_transport: web_search's httpx transport (tests pass `httpx.MockTransport`).

    Raises:
        ConfigurationError: SEARCH_PROVIDER names an unknown provider.
    """
    calculator_limits = CalculatorLimits(
        max_chars=settings.calculator_max_chars,
        max_depth=settings.calculator_max_depth,
        max_digits=settings.calculator_max_digits,
        max_exponent=settings.calculator_max_exponent,
    )
    fetcher = SafeFetcher(
        FetchLimits(
            timeout_s=settings.http_fetch_timeout_s,
            max_bytes=settings.http_fetch_max_bytes,
            max_redirects=settings.http_fetch_max_redirects,
        ),
        resolver=resolver,
        transport=fetch_transport,
    )
    search = make_search_backend(
        settings.search_provider,
        settings.search_api_key,
        timeout_s=settings.search_timeout_s,
        transport=search_transport,
    )
    tools: list[Tool[..., Any]] = [make_calculator_tool(calculator_limits)]
    if sql_runner is not None:
        tools.append(make_sql_readonly_tool(sql_runner, row_limit=settings.sql_row_limit))
    tools.append(make_read_file_tool(Path(settings.file_tool_base_dir), settings.file_tool_max_bytes))
    tools.append(make_http_fetch_tool(fetcher))
    tools.append(
        make_web_search_tool(search, max_results=settings.search_max_results, provider=settings.search_provider)
    )
    return tools
