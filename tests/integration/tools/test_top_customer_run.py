"""The two-tool demo run: examples/scripts/top_customer.json against the seeded demo database.

It runs the way `agentkit run --script examples/scripts/top_customer.json "..."` does (the same
container and use-case), with the built-in tools pointed at this module's demo database.
"""

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from dishka import Provider, Scope, provide

from agentkit.adapters.tools import build_builtin_tools
from agentkit.adapters.tools.calculator import evaluate, format_number
from agentkit.adapters.tools.sql_readonly import AsyncpgReadOnlyQueryRunner
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.queries import GetTrace
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.domain.ids import OwnerId
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import ToolStep
from agentkit.entrypoints.wiring import make_container
from agentkit.entrypoints.wiring.locations import demo_reader_dsn
from agentkit.entrypoints.wiring.providers.tools import builtin_tools_config
from agentkit.entrypoints.wiring.settings import Settings, load_settings
from tests.demo_fixtures import DemoDatabase

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).parents[3] / "examples" / "scripts" / "top_customer.json"
GOAL = "How much did our top customer spend, and what is 15% of that?"


class BuiltinToolsProvider(Provider):
    """The registry with the built-in tools given, replacing the default one."""

    def __init__(self, tools: list[Tool[..., Any]]) -> None:
        super().__init__()
        self._tools = tools

    @provide(scope=Scope.APP)
    def registry(self, settings: Settings) -> ToolRegistry:
        tools = settings.tools
        return ToolRegistry(
            self._tools, default_timeout_s=tools.tool_timeout_s, output_max_chars=tools.tool_output_max_chars
        )


@pytest.mark.parametrize(
    "provider",
    [{"LLM_PROVIDER": "scripted", "LLM_SCRIPT": str(SCRIPT)}, {"LLM_PROVIDER": "demo"}],
    ids=["script", "demo"],
)
async def test_the_demo_question_uses_both_tools_and_answers_correctly(
    demo_db: DemoDatabase, provider: dict[str, str]
) -> None:
    settings = load_settings(
        {
            "STATE_BACKEND": "memory",
            **provider,
            "DEMO_DATABASE": demo_db.database,
            "POSTGRES_READONLY_USER": demo_db.reader,
            "POSTGRES_READONLY_PASSWORD": demo_db.password,
        }
    )
    runner = AsyncpgReadOnlyQueryRunner(
        demo_reader_dsn(settings.state, demo_db.admin_url),
        row_limit=settings.tools.sql_row_limit,
        statement_timeout_ms=settings.tools.sql_statement_timeout_ms,
    )
    tools = build_builtin_tools(builtin_tools_config(settings.tools), sql_runner=runner)
    container = make_container(settings, BuiltinToolsProvider(tools))
    try:
        async with container() as request:
            run = await (await request.get(RunAgent)).execute(CreateRunInput(owner=OwnerId("local"), goal=GOAL))
            _, steps = await (await request.get(GetTrace)).execute(run.id, None)
    finally:
        await container.close()
        await runner.aclose()

    assert run.status is RunStatus.SUCCEEDED
    tool_steps = [step for step in steps if isinstance(step, ToolStep)]
    assert [step.tool_name for step in tool_steps] == ["sql_readonly", "calculator"]
    assert all(step.result.ok for step in tool_steps)
    sql_output, calculator_output = (step.result.output for step in tool_steps)
    assert sql_output.splitlines()[2] == "Margaret Hamilton | 2870.79"

    # The script's figures are the ones the tools produced: the total and 15% of it.
    total = Decimal(sql_output.splitlines()[2].split("|")[1].strip())
    assert calculator_output == format_number(evaluate(f"{total} * 0.15")) == "430.6185"
    assert run.answer is not None
    answer_numbers = {n.replace(",", "") for n in re.findall(r"[\d,]+\.\d+", run.answer)}
    assert {"2870.79", "430.62"} <= answer_numbers
