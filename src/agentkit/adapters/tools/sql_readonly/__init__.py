"""sql_readonly: one SELECT, checked by PostgreSQL's parser, run by a read-only role in the demo database."""

from agentkit.adapters.tools.sql_readonly.guard import check_select
from agentkit.adapters.tools.sql_readonly.runner import AsyncpgReadOnlyQueryRunner, ReadOnlyQueryRunner
from agentkit.adapters.tools.sql_readonly.table import QueryResult, format_table
from agentkit.adapters.tools.sql_readonly.tool import make_sql_readonly_tool

__all__ = [
    "AsyncpgReadOnlyQueryRunner",
    "QueryResult",
    "ReadOnlyQueryRunner",
    "check_select",
    "format_table",
    "make_sql_readonly_tool",
]
