"""Finding user tools: modules named in AGENTKIT_TOOL_MODULES and the `agentkit.tools` entry points.

A module offers its tools (`@tool` functions) and its context providers (`@context_provider`
functions that supply the ToolContext subclasses its tools ask for).
"""

import importlib
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, TypeVar

from agentkit.application.errors import ConfigurationError
from agentkit.application.tools.context import ContextProvider
from agentkit.application.tools.tool import Tool

TOOLS_ENTRY_POINT_GROUP = "agentkit.tools"
T = TypeVar("T")


def tools_in(obj: Any) -> list[Tool[..., Any]]:
    """The tools a module defines or lists in `__all__`, or the tool/tools an entry point names."""
    return _offered(obj, Tool, lambda item: item.fn.__module__)


def context_providers_in(obj: Any) -> list[ContextProvider[Any]]:
    """The context providers a module defines or lists in `__all__` (or an entry point names)."""
    return _offered(obj, ContextProvider, lambda item: item.build.__module__)


def _offered(obj: Any, kind: type[T], home: Callable[[T], str]) -> list[T]:
    if isinstance(obj, kind):
        return [obj]
    if isinstance(obj, ModuleType):
        # the names in __all__ if it has one, else what is defined there (not what it imported)
        exported = getattr(obj, "__all__", None)
        if exported is not None:
            return [value for name in exported if isinstance(value := getattr(obj, name, None), kind)]
        return [value for value in vars(obj).values() if isinstance(value, kind) and home(value) == obj.__name__]
    if isinstance(obj, list | tuple):
        return [item for item in obj if isinstance(item, kind)]
    return []


def import_tool_modules(modules: Iterable[str]) -> list[ModuleType]:
    """Import each module by dotted name.

    Raises:
        ConfigurationError: a module cannot be imported (naming AGENTKIT_TOOL_MODULES and the module).
    """
    imported: list[ModuleType] = []
    for name in modules:
        try:
            imported.append(importlib.import_module(name))
        except Exception as exc:
            raise ConfigurationError(f"AGENTKIT_TOOL_MODULES: cannot import {name!r}: {exc}") from None
    return imported


def load_tool_modules(modules: Iterable[str]) -> list[Tool[..., Any]]:
    """The tools of each module named (see `import_tool_modules` for errors)."""
    return [item for module in import_tool_modules(modules) for item in tools_in(module)]


def load_entry_points(group: str = TOOLS_ENTRY_POINT_GROUP) -> list[Any]:
    """What each entry point of the group names (a module, a tool, a provider or a list of them).

    Raises:
        ConfigurationError: an entry point fails to load (naming it and the group).
    """
    loaded: list[Any] = []
    for point in entry_points(group=group):
        try:
            loaded.append(point.load())
        except Exception as exc:
            raise ConfigurationError(f"entry point {point.name!r} in {group!r} failed to load: {exc}") from None
    return loaded


def load_entry_point_tools(group: str = TOOLS_ENTRY_POINT_GROUP) -> list[Tool[..., Any]]:
    """Load the tools that installed packages register under the entry-point group."""
    return [item for obj in load_entry_points(group) for item in tools_in(obj)]
