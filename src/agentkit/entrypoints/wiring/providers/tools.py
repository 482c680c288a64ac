"""The tools: the built-in ones with the settings' limits, the user's modules, and the demo database."""

from collections.abc import AsyncIterator
from typing import Any, NewType

from dishka import Provider, Scope, provide

from agentkit.adapters.demo import PostgresDemoSeeder
from agentkit.adapters.tools import BuiltinToolsConfig, SearchConfig, build_builtin_tools
from agentkit.adapters.tools.calculator import CalculatorLimits
from agentkit.adapters.tools.http_fetch import FetchLimits
from agentkit.adapters.tools.processes import ProcessPoolConfig, ProcessToolSandbox
from agentkit.adapters.tools.sql_readonly import AsyncpgReadOnlyQueryRunner
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.demo_seeder import DemoSeeder
from agentkit.application.ports.tool_sandbox import ToolSandbox
from agentkit.application.tools.availability import ToolAvailability
from agentkit.application.tools.discovery import context_providers_in, import_tool_modules, load_entry_points, tools_in
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.slots import CallSlots
from agentkit.application.tools.tool import Tool
from agentkit.entrypoints.wiring.locations import demo_reader_dsn, demo_seed_config
from agentkit.entrypoints.wiring.settings import Settings, ToolSettings
from agentkit.entrypoints.wiring.startup import StateEndpoints

BuiltinTools = NewType("BuiltinTools", tuple[Tool[..., Any], ...])


class SqlRunner:
    """The read-only query runner, or None where there is no database for sql_readonly."""

    def __init__(self, runner: AsyncpgReadOnlyQueryRunner | None) -> None:
        self.runner = runner


def builtin_tools_config(tools: ToolSettings) -> BuiltinToolsConfig:
    """The built-in tools' limits and keys, from the settings."""
    return BuiltinToolsConfig(
        calculator=CalculatorLimits(
            max_chars=tools.calculator_max_chars,
            max_depth=tools.calculator_max_depth,
            max_digits=tools.calculator_max_digits,
            max_exponent=tools.calculator_max_exponent,
        ),
        fetch=FetchLimits(
            timeout_s=tools.http_fetch_timeout_s,
            max_bytes=tools.http_fetch_max_bytes,
            max_redirects=tools.http_fetch_max_redirects,
        ),
        search=SearchConfig(
            provider=tools.search_provider,
            api_key=tools.search_api_key,
            max_results=tools.search_max_results,
            timeout_s=tools.search_timeout_s,
        ),
        file_base_dir=tools.file_tool_base_dir,
        file_max_bytes=tools.file_tool_max_bytes,
        sql_row_limit=tools.sql_row_limit,
    )


class ToolsProvider(Provider):
    """The registry every run uses; sql_readonly only where there is a PostgreSQL holding the demo database."""

    scope = Scope.APP

    @provide
    async def sql_runner(self, settings: Settings, endpoints: StateEndpoints) -> AsyncIterator[SqlRunner]:
        """The read-only query runner (its pool opens on the first query), closed with the container."""
        state, tools = settings.state, settings.tools
        if endpoints.database_url is None and not state.database_readonly_url:
            yield SqlRunner(None)
            return
        runner = AsyncpgReadOnlyQueryRunner(
            demo_reader_dsn(state, endpoints.database_url),
            row_limit=tools.sql_row_limit,
            statement_timeout_ms=tools.sql_statement_timeout_ms,
        )
        try:
            yield SqlRunner(runner)
        finally:
            await runner.aclose()

    @provide
    async def sandbox(self, settings: Settings) -> AsyncIterator[ToolSandbox]:
        """The worker processes isolated tools run in (none started until a call needs one), killed on exit."""
        tools = settings.tools
        sandbox = ProcessToolSandbox(
            ProcessPoolConfig(
                size=tools.tool_process_pool_size,
                memory_mb=tools.tool_process_memory_mb,
                cpu_s=tools.tool_process_cpu_s,
                env=tools.tool_process_env,
            )
        )
        try:
            yield sandbox
        finally:
            await sandbox.aclose()

    @provide
    def builtin_tools(self, settings: Settings, runner: SqlRunner) -> BuiltinTools:
        """calculator, sql_readonly, read_file, http_fetch and web_search."""
        return BuiltinTools(tuple(build_builtin_tools(builtin_tools_config(settings.tools), sql_runner=runner.runner)))

    @provide
    def registry(self, settings: Settings, builtin: BuiltinTools, sandbox: ToolSandbox) -> ToolRegistry:
        """Built-in tools, then AGENTKIT_TOOL_MODULES, then the `agentkit.tools` entry points.

        Their context providers come along, so a tool asking for a ToolContext subclass is served
        (and one whose context nobody supplies is refused here, at start-up, as is a tool that must
        run in a worker process and cannot be imported there by name).
        """
        tools = settings.tools
        offered = [*import_tool_modules(tools.agentkit_tool_modules), *load_entry_points()]
        return ToolRegistry(
            [*builtin, *(item for obj in offered for item in tools_in(obj))],
            default_timeout_s=tools.tool_timeout_s,
            output_max_chars=tools.tool_output_max_chars,
            context_providers=[provider for obj in offered for provider in context_providers_in(obj)],
            sandbox=sandbox,
            sync_isolation=tools.tool_isolation,
            slots=CallSlots(tools.tool_concurrency_per_process),
        )

    @provide
    def availability(self, settings: Settings, runner: SqlRunner) -> ToolAvailability:
        """Which built-in tools this configuration leaves out or limits, and why (`agentkit tools` says so)."""
        absent: dict[str, str] = {}
        limited: dict[str, str] = {}
        if runner.runner is None:
            absent["sql_readonly"] = (
                "no PostgreSQL holding the demo database: set DATABASE_URL (then `agentkit seed-demo`), "
                "or leave it unset and use STATE_BACKEND=embedded (what `agentkit serve` does)"
            )
        if not settings.tools.search_api_key:
            limited["web_search"] = "SEARCH_API_KEY is not set: every call answers with a configuration error"
        return ToolAvailability(absent=absent, limited=limited)

    @provide
    def demo_seeder(self, settings: Settings, endpoints: StateEndpoints) -> DemoSeeder:
        """Seeds the demo database on AgentKit's PostgreSQL server."""
        if endpoints.database_url is None:
            raise ConfigurationError(
                "DATABASE_URL: seeding the demo database needs PostgreSQL (set DATABASE_URL or STATE_BACKEND=embedded)"
            )
        return PostgresDemoSeeder(endpoints.database_url, demo_seed_config(settings.state, settings.tools))
