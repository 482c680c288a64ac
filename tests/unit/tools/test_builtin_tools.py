"""build_builtin_tools: the five tools from the settings (as the root maps them), run through the real registry."""

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from agentkit.adapters.tools import build_builtin_tools
from agentkit.adapters.tools.sql_readonly import QueryResult, ReadOnlyQueryRunner
from agentkit.application.errors import ConfigurationError
from agentkit.application.tools import ToolContext, ToolRegistry
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult
from agentkit.entrypoints.wiring.providers.tools import builtin_tools_config
from agentkit.entrypoints.wiring.settings import Settings, load_settings

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"))


class OneRowRunner(ReadOnlyQueryRunner):
    async def run(self, sql: str) -> QueryResult:
        return QueryResult(columns=("total",), rows=((Decimal("2870.79"),),))


async def resolve_public(host: str) -> Sequence[str]:
    return ["93.184.216.34"]


def page(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/html"}, stream=httpx.ByteStream(b"<p>public page</p>"))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "hello.txt").write_text("hello from a file", encoding="utf-8")
    return load_settings({"FILE_TOOL_BASE_DIR": str(tmp_path), "CALCULATOR_MAX_CHARS": "20"})


@pytest.fixture
def registry(settings: Settings) -> ToolRegistry:
    tools = build_builtin_tools(
        builtin_tools_config(settings.tools),
        sql_runner=OneRowRunner(),
        resolver=resolve_public,
        fetch_transport=httpx.MockTransport(page),
    )
    return ToolRegistry(tools)


async def call(registry: ToolRegistry, name: str, **arguments: object) -> ToolResult:
    return await registry.execute(ToolCall(id=ToolCallId("c"), name=name, arguments=dict(arguments)), CONTEXT)


def test_builds_all_five_tools(registry: ToolRegistry) -> None:
    assert registry.names() == ["calculator", "sql_readonly", "read_file", "http_fetch", "web_search"]


def test_leaves_sql_readonly_out_without_a_runner(settings: Settings) -> None:
    assert "sql_readonly" not in [tool.name for tool in build_builtin_tools(builtin_tools_config(settings.tools))]


async def test_each_tool_answers_through_the_registry(registry: ToolRegistry) -> None:
    assert (await call(registry, "calculator", expression="2870.79 * 0.15")).output == "430.6185"
    assert "2870.79" in (await call(registry, "sql_readonly", query="SELECT 1")).output
    assert (await call(registry, "read_file", path="hello.txt")).output == "hello from a file"
    assert (await call(registry, "http_fetch", url="https://example.com/")).output.endswith("public page")


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("calculator", {"expression": "1 + " * 10 + "1"}, "the limit is 20"),
        ("calculator", {"expression": "1/0"}, "division by zero"),
        ("sql_readonly", {"query": "DROP TABLE customers"}, "only SELECT"),
        ("read_file", {"path": "../../etc/passwd"}, "outside the file folder"),
        ("http_fetch", {"url": "http://169.254.169.254/latest/meta-data/"}, "cloud metadata"),
        ("web_search", {"query": "agentkit"}, "web_search is not configured: set SEARCH_API_KEY"),
    ],
)
async def test_refusals_reach_the_model_as_plain_error_results(
    registry: ToolRegistry, name: str, arguments: dict[str, object], error: str
) -> None:
    result = await call(registry, name, **arguments)
    assert not result.ok
    assert result.error is not None
    assert error in result.error
    assert "Traceback" not in result.error


def test_an_unknown_search_provider_fails_at_build_time(settings: Settings) -> None:
    bad = load_settings({"SEARCH_PROVIDER": "altavista"})
    with pytest.raises(ConfigurationError, match="SEARCH_PROVIDER"):
        build_builtin_tools(builtin_tools_config(bad.tools))
