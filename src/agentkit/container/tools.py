"""The built-in tools, configured from the settings, and the demo database sql_readonly reads."""

from collections.abc import AsyncIterator
from typing import Any, NewType

from dishka import Provider, Scope, provide

from agentkit.adapters.demo.seeder import PostgresDemoSeeder
from agentkit.adapters.tools import build_builtin_tools, make_sql_runner
from agentkit.adapters.tools.sql_readonly import ReadOnlyQueryRunner
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.demo_seeder import DemoSeeder
from agentkit.application.settings import Settings
from agentkit.application.tools.tool import Tool
from agentkit.container.state import StateConnections

BuiltinTools = NewType("BuiltinTools", tuple[Tool[..., Any], ...])


class SqlRunner:
    """The read-only query runner, or None where there is no database for sql_readonly."""

    def __init__(self, runner: ReadOnlyQueryRunner | None) -> None:
        self.runner = runner


class ToolsProvider(Provider):
    """Built-in tools; sql_readonly only where there is a PostgreSQL to hold the demo database."""

    scope = Scope.APP

    @provide
    async def sql_runner(self, settings: Settings, conns: StateConnections) -> AsyncIterator[SqlRunner]:
        """The read-only query runner (its pool opens on the first query), closed with the container."""
        if conns.engine is None and not settings.database_readonly_url:
            yield SqlRunner(None)
            return
        runner = make_sql_runner(settings, conns.engine.url if conns.engine is not None else None)
        try:
            yield SqlRunner(runner)
        finally:
            await runner.aclose()

    @provide
    def builtin_tools(self, settings: Settings, runner: SqlRunner) -> BuiltinTools:
        """calculator, sql_readonly, read_file, http_fetch and web_search."""
        return BuiltinTools(tuple(build_builtin_tools(settings, sql_runner=runner.runner)))

    @provide
    def demo_seeder(self, settings: Settings, conns: StateConnections) -> DemoSeeder:
        """Seeds the demo database on AgentKit's PostgreSQL server."""
        if conns.engine is None:
            raise ConfigurationError(
                "DATABASE_URL: seeding the demo database needs PostgreSQL (set DATABASE_URL or STATE_BACKEND=embedded)"
            )
        return PostgresDemoSeeder(conns.engine.url, settings)
