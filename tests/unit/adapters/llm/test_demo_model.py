"""The `demo` provider plays the turns of AgentKit's demo questions with real tool results."""

from typing import Any

from agentkit.adapters.llm.demo import HELP, TOP_CUSTOMER_SQL, DemoLLMClient
from agentkit.adapters.memory import (
    FixedClock,
    InMemoryRunRepository,
    InMemorySessionStore,
    InMemoryTraceSink,
    SequentialIdGenerator,
)
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.tools.calculator import CalculatorLimits, make_calculator_tool
from agentkit.adapters.tools.sql_readonly import QueryResult, format_table
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import Tool, ToolRegistry, tool
from agentkit.domain.ids import OwnerId
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import Step, ToolStep

CALCULATOR = make_calculator_tool(CalculatorLimits())
queries: list[str] = []


@tool(name="sql_readonly")
def fake_sql(query: str) -> str:
    """Answer the top-customer query from a fixed table, as the seeded demo database would.

    Args:
        query: The SELECT.
    """
    queries.append(query)
    return format_table(QueryResult(columns=("name", "total_spent"), rows=(("Margaret Hamilton", "2870.79"),)))


async def run(goal: str, tools: list[Tool[..., Any]]) -> tuple[Run, list[Step]]:
    clock, runs, trace = FixedClock(), InMemoryRunRepository(), InMemoryTraceSink()
    loop = AgentLoop(
        memory_loop_deps(
            DemoLLMClient(),
            ToolRegistry(tools),
            runs=runs,
            trace=trace,
            sessions=InMemorySessionStore(clock),
            clock=clock,
            config=AgentConfig(),
        )
    )
    create = CreateRun(runs=runs, clock=clock, ids=SequentialIdGenerator(), max_steps=10, max_goal_chars=1000)
    done = await RunAgent(create=create, loop=loop).execute(CreateRunInput(owner=OwnerId("o"), goal=goal))
    return done, await trace.steps(done.id)


def tool_steps(steps: list[Step]) -> list[tuple[str, dict[str, Any], str]]:
    return [(s.tool_name, s.arguments, s.result.output) for s in steps if isinstance(s, ToolStep)]


async def test_the_top_customer_question_queries_then_calculates_then_answers() -> None:
    done, steps = await run("How much did our top customer spend, and what is 15% of that?", [fake_sql, CALCULATOR])

    assert done.status is RunStatus.SUCCEEDED
    assert tool_steps(steps) == [
        ("sql_readonly", {"query": TOP_CUSTOMER_SQL}, fake_sql(TOP_CUSTOMER_SQL)),
        ("calculator", {"expression": "2870.79 * 0.15"}, "430.6185"),
    ]
    assert done.answer == (
        "Our top customer is Margaret Hamilton, who spent $2,870.79 (cancelled orders excluded). "
        "15% of that is $430.62 (exactly 430.6185)."
    )


async def test_arithmetic_in_the_goal_goes_through_the_calculator() -> None:
    done, steps = await run("What is (17 + 25) * 3, and what is 15% of it?", [CALCULATOR])

    assert [(name, args) for name, args, _ in tool_steps(steps)] == [
        ("calculator", {"expression": "(17 + 25) * 3"}),
        ("calculator", {"expression": "126 * 0.15"}),
    ]
    assert done.answer == "(17 + 25) * 3 = 126, and 15% of 126 is 18.9."


async def test_without_the_sql_tool_it_says_what_is_missing() -> None:
    done, steps = await run("Who is our top customer?", [CALCULATOR])

    assert done.status is RunStatus.SUCCEEDED
    assert tool_steps(steps) == []
    assert "sql_readonly tool is not available here" in (done.answer or "")


async def test_any_other_goal_gets_the_help_text() -> None:
    done, _ = await run("Write me a poem about the sea.", [CALCULATOR])
    assert done.answer == HELP
    # one line for each way to a real model
    assert "- OpenAI: LLM_PROVIDER=openai and OPENAI_API_KEY" in HELP.splitlines()
    assert "- Gemini: LLM_PROVIDER=gemini and GEMINI_API_KEY" in HELP.splitlines()
    assert any(
        line.startswith("- a local OpenAI-compatible server") and "LLM_BASE_URL" in line for line in HELP.splitlines()
    )
