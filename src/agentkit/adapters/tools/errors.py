"""Errors the built-in tools raise; the registry hands their message to the model as it is.

ToolError (agentkit.application.tools)
 └── BuiltinToolError
      ├── CalculatorError   an expression refused (unsafe, too big) or failed (division by zero)
      ├── UnsafeQuery       SQL the checker refuses before it reaches the database
      ├── QueryFailed       the database refused or failed the query (permission, timeout, syntax)
      ├── FileRefused       a path outside the folder, a missing, binary or oversized file
      ├── FetchRefused      a URL or address http_fetch will not contact
      ├── FetchFailed       the fetch went wrong on the way (timeout, connection, bad status)
      └── SearchFailed      the search API is not configured or failed
"""

from agentkit.application.tools import ToolError


class BuiltinToolError(ToolError):
    """Base of the errors raised by AgentKit's own tools."""


class CalculatorError(BuiltinToolError):
    """The expression is not allowed or cannot be evaluated."""


class UnsafeQuery(BuiltinToolError):
    """The SQL is not exactly one read-only SELECT."""


class QueryFailed(BuiltinToolError):
    """The database refused or failed to run the query."""


class FileRefused(BuiltinToolError):
    """The file may not, or cannot, be read as text."""


class FetchRefused(BuiltinToolError):
    """The URL, or an address its host resolves to, is not allowed."""


class FetchFailed(BuiltinToolError):
    """The request was allowed but did not produce a usable response."""


class SearchFailed(BuiltinToolError):
    """The search provider is not configured or did not answer."""
