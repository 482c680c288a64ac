"""structlog, configured once per process: JSON in production, readable in a terminal."""

import logging
import sys
from typing import TextIO

import structlog

from agentkit.application.settings import Settings


def configure_logging(settings: Settings, *, stream: TextIO | None = None) -> None:
    """Configure structlog (and the stdlib root logger) for this process.

    Every line carries the context variables bound at the time (run_id during a run, request_id
    during a request). LOG_FORMAT=auto renders for humans on a terminal and JSON elsewhere.
    """
    out = stream or sys.stderr
    level = getattr(logging, settings.log_level)
    as_json = settings.log_format == "json" or (settings.log_format == "auto" and not out.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        # not cached: a reconfigured process (tests, embedding apps) must not keep writing to an old stream
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=out, format="%(levelname)s %(name)s: %(message)s")
