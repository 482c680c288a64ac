"""A worker process: settings, start-up, the container and the SAQ worker, in that order."""

import gc

import structlog

from agentkit.adapters.queue import RunWorker
from agentkit.application.ports.background_work import BackgroundWork
from agentkit.application.ports.llm_client import LLMClient
from agentkit.entrypoints.wiring.container import make_container
from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.providers.agents import mcp_servers_listed
from agentkit.entrypoints.wiring.providers.core import BuiltLLMProvider
from agentkit.entrypoints.wiring.settings import Settings
from agentkit.entrypoints.wiring.startup import started_state

logger = structlog.get_logger(__name__)


async def run_worker(settings: Settings, llm: LLMClient) -> None:
    """Execute queued runs until SIGTERM on these settings (RUN_MODE=queue) and this LLM client (its builder
    closes it); with no servers configured (the root chose STATE_BACKEND=embedded), on the embedded ones
    `make run` uses."""
    configure_logging(settings.logging)
    async with started_state(settings, check_schema=True) as endpoints:
        container = make_container(settings, BuiltLLMProvider(llm), endpoints=endpoints)
        try:
            worker = await container.get(RunWorker)  # a bad setting is one line here
            background = await container.get(BackgroundWork)
            await mcp_servers_listed(container, settings.agents.mcp_connect_timeout_s)
            gc.collect()
            gc.freeze()  # as for the API: a full collection would stall every run in flight
            await background.start()  # the webhook sender: this process's runs' events, and any due
            try:
                await worker.run()
            finally:
                await background.stop()
        finally:
            gc.unfreeze()
            await container.close()
