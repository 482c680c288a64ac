"""Built-in tools, outbound adapters that touch the world, each safe by construction.

calculator (an AST whitelist), sql_readonly (one parsed SELECT, a read-only role and
transaction), read_file (one folder, resolved paths), http_fetch (public addresses only, pinned
connections) and web_search (a search API behind a port). `build_builtin_tools(config)` builds
them all; docs/tools.md lists their limits and which test covers which rule.
"""

from agentkit.adapters.tools.builtin import BuiltinToolsConfig, SearchConfig, build_builtin_tools

__all__ = ["BuiltinToolsConfig", "SearchConfig", "build_builtin_tools"]
