"""What a person listing the tools should know beyond their schemas: which are left out, and why."""

import msgspec


class ToolAvailability(msgspec.Struct, frozen=True, kw_only=True):
    """The built-in tools this configuration leaves out or limits, each with the reason and the remedy.

    Attributes:
        absent: Tools not registered at all, by name, with why (sql_readonly without a demo database).
        limited: Registered tools whose calls will fail as configured, by name, with why (web_search
            without a key).
    """

    absent: dict[str, str] = msgspec.field(default_factory=dict)
    limited: dict[str, str] = msgspec.field(default_factory=dict)
