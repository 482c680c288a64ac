"""A registered tool as models see it (GET /v1/tools, and the tool sets of a trace)."""

from typing import Any

import msgspec

from agentkit.domain.tools import ToolSchema


class ToolView(msgspec.Struct, kw_only=True):
    """A registered tool as models see it."""

    name: str
    description: str
    parameters: dict[str, Any]


def tool_view(schema: ToolSchema) -> ToolView:
    """The wire view of a tool."""
    return ToolView(name=schema.name, description=schema.description, parameters=schema.parameters)
