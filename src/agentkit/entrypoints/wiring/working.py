"""A worker process: settings, start-up, the container and the SAQ worker, in that order."""

import gc
from collections.abc import Mapping
from typing import Any

import structlog

from agentkit.adapters.queue import RunWorker
from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.providers.agents import mcp_servers_listed
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.entrypoints.wiring.startup import started_state

logger = structlog.get_logger(__name__)


async def run_worker(environ: Mapping[str, str], overrides: Mapping[str, Any]) -> None:
    """Execute queued runs until SIGTERM; with no servers configured, on the embedded ones `make run` uses."""
    chosen = {**overrides, "run_mode": "queue"}
    if environ.get("STATE_BACKEND", "auto") in ("", "auto"):
        chosen["state_backend"] = "embedded"  # configured servers still win: see plan_state
    settings = load_settings(environ, **chosen)
    configure_logging(settings.logging)
    async with started_state(settings) as endpoints:
        container = make_container(settings, endpoints=endpoints)
        try:
            worker = await container.get(RunWorker)  # a bad setting is one line here
            await mcp_servers_listed(container, settings.agents.mcp_connect_timeout_s)
            gc.collect()
            gc.freeze()  # as for the API: a full collection would stall every run in flight
            await worker.run()
        finally:
            gc.unfreeze()
            await container.close()
