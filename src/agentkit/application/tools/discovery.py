"""Finding user tools: modules named in AGENTKIT_TOOL_MODULES and the `agentkit.tools` entry points."""

import importlib
from collections.abc import Iterable
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from agentkit.application.errors import ConfigurationError
from agentkit.application.tools.tool import Tool

TOOLS_ENTRY_POINT_GROUP = "agentkit.tools"


def tools_in(obj: Any) -> list[Tool[..., Any]]:
    """The tools a module defines or lists in `__all__`, or the tool/tools an entry point names."""
    if isinstance(obj, Tool):
        return [obj]
    if isinstance(obj, ModuleType):
        # the names in __all__ if it has one, else the tools defined there (not the ones it imported)
        exported = getattr(obj, "__all__", None)
        if exported is not None:
            return [value for name in exported if isinstance(value := getattr(obj, name, None), Tool)]
        return [
            value for value in vars(obj).values() if isinstance(value, Tool) and value.fn.__module__ == obj.__name__
        ]
    if isinstance(obj, list | tuple):
        return [item for item in obj if isinstance(item, Tool)]
    return []


def load_tool_modules(modules: Iterable[str]) -> list[Tool[..., Any]]:
    """Import each module by dotted name and collect its tools.

    Raises:
        ConfigurationError: a module cannot be imported (naming AGENTKIT_TOOL_MODULES and the module).
    """
    found: list[Tool[..., Any]] = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            raise ConfigurationError(f"AGENTKIT_TOOL_MODULES: cannot import {name!r}: {exc}") from None
        found.extend(tools_in(module))
    return found


def load_entry_point_tools(group: str = TOOLS_ENTRY_POINT_GROUP) -> list[Tool[..., Any]]:
    """Load the tools that installed packages register under the entry-point group."""
    found: list[Tool[..., Any]] = []
    for point in entry_points(group=group):
        try:
            found.extend(tools_in(point.load()))
        except Exception as exc:
            raise ConfigurationError(f"entry point {point.name!r} in {group!r} failed to load: {exc}") from None
    return found
