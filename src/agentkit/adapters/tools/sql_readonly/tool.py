"""The `sql_readonly` tool: the parser check, then the database's own layers."""

from collections.abc import Coroutine
from typing import Any

from agentkit.adapters.tools.sql_readonly.guard import check_select
from agentkit.adapters.tools.sql_readonly.runner import ReadOnlyQueryRunner
from agentkit.adapters.tools.sql_readonly.table import format_table
from agentkit.application.tools import Tool, tool

_DESCRIPTION = (
    "Run one read-only SQL SELECT against the demo shop database (PostgreSQL) and return the rows "
    "as a text table (at most {row_limit} rows). Tables: customers(id, name, email, country, signed_up_on), "
    "products(id, name, category, unit_price), orders(id, customer_id, ordered_at, "
    "status: 'paid' | 'shipped' | 'cancelled'), order_items(order_id, product_id, quantity, unit_price). "
    "An order's amount is the sum of quantity * unit_price over its items. "
    "Only SELECT (WITH ... SELECT too) is allowed."
)


def make_sql_readonly_tool(runner: ReadOnlyQueryRunner, *, row_limit: int) -> Tool[[str], Coroutine[Any, Any, str]]:
    """The `sql_readonly` tool, running checked queries through `runner` (which enforces `row_limit`)."""

    @tool(name="sql_readonly", description=_DESCRIPTION.format(row_limit=row_limit), idempotent=True)
    async def sql_readonly(query: str) -> str:
        """Run one read-only SELECT.

        Args:
            query: Exactly one SELECT statement.
        """
        checked = check_select(query)
        return format_table(await runner.run(checked))

    return sql_readonly
