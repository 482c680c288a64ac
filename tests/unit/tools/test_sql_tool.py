"""The sql_readonly tool: the parser check runs before the runner sees anything."""

from decimal import Decimal

import pytest

from agentkit.adapters.tools.errors import UnsafeQuery
from agentkit.adapters.tools.sql_readonly import QueryResult, ReadOnlyQueryRunner, make_sql_readonly_tool
from agentkit.application.tools import ToolContext, ToolRegistry
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall


class RecordingQueryRunner(ReadOnlyQueryRunner):
    """Answers every query with one fixed result and remembers what it was asked."""

    def __init__(self, result: QueryResult) -> None:
        self.result = result
        self.queries: list[str] = []

    async def run(self, sql: str) -> QueryResult:
        self.queries.append(sql)
        return self.result


@pytest.fixture
def runner() -> RecordingQueryRunner:
    return RecordingQueryRunner(QueryResult(columns=("total",), rows=((Decimal("2870.79"),),)))


async def test_runs_a_checked_select_and_formats_the_rows(runner: RecordingQueryRunner) -> None:
    sql_readonly = make_sql_readonly_tool(runner, row_limit=100)
    assert await sql_readonly("  SELECT sum(x) AS total FROM t ") == "total\n-------\n2870.79\n(1 row)"
    assert runner.queries == ["SELECT sum(x) AS total FROM t"]


@pytest.mark.parametrize(
    "sql", ["DROP TABLE customers", "SELECT 1; DELETE FROM orders", "SELECT pg_sleep(10)", "COPY t TO STDOUT"]
)
async def test_refused_queries_never_reach_the_database(runner: RecordingQueryRunner, sql: str) -> None:
    sql_readonly = make_sql_readonly_tool(runner, row_limit=100)
    with pytest.raises(UnsafeQuery):
        await sql_readonly(sql)
    assert runner.queries == []


async def test_the_model_reads_the_refusal_as_a_tool_error(runner: RecordingQueryRunner) -> None:
    registry = ToolRegistry([make_sql_readonly_tool(runner, row_limit=100)])
    call = ToolCall(id=ToolCallId("c1"), name="sql_readonly", arguments={"query": "DELETE FROM orders"})
    result = await registry.execute(call, ToolContext(run_id=RunId("r"), owner=OwnerId("o")))
    assert not result.ok
    assert result.error is not None
    assert "only SELECT queries are allowed; this is a DELETE" in result.error


def test_the_description_names_the_tables_and_the_row_limit(runner: RecordingQueryRunner) -> None:
    sql_readonly = make_sql_readonly_tool(runner, row_limit=42)
    assert "at most 42 rows" in sql_readonly.description
    assert "order_items(order_id, product_id, quantity, unit_price)" in sql_readonly.description
    assert sql_readonly.schema.parameters["required"] == ["query"]
