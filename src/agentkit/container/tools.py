"""The built-in tools, configured from the settings."""

from typing import Any

from agentkit.application.settings import Settings
from agentkit.application.tools.tool import Tool


def builtin_tools(settings: Settings) -> list[Tool[..., Any]]:
    """The built-in tools this runtime offers every run."""
    del settings
    return []
