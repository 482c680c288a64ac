"""The container a command runs on: settings from the environment, logging, and a clean close."""

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from dishka import AsyncContainer, Provider

from agentkit.application.settings import Settings, load_settings
from agentkit.container import make_container
from agentkit.entrypoints.logging import configure_logging


@contextlib.asynccontextmanager
async def command_container(
    environ: Mapping[str, str], *providers: Provider, **overrides: Any
) -> AsyncIterator[tuple[Settings, AsyncContainer]]:
    """Settings (with the command line's overrides), logging set up, and a container closed on exit."""
    settings = load_settings(environ, **overrides)
    configure_logging(settings)
    container = make_container(settings, *providers)
    try:
        yield settings, container
    finally:
        await container.close()
