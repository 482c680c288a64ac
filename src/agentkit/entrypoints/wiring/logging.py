"""structlog, configured once per process: JSON in production, readable in a terminal.

One format per process: structlog's own lines and every stdlib log record (uvicorn's, asyncio's,
any library's) go through the same renderer, so a log collector reading JSON never meets a
plain-text line.
"""

import logging
import sys
from typing import TextIO

import structlog

from agentkit.entrypoints.wiring.settings import LoggingSettings

# What every line carries, structlog's own and the stdlib's alike.
_SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


class _StructlogHandler(logging.StreamHandler[TextIO]):
    """The root handler this module installs; a later `configure_logging` replaces it, not others'."""


def configure_logging(settings: LoggingSettings, *, stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger for this process, both rendering alike.

    Every line carries the context variables bound at the time (run_id during a run, request_id
    during a request). LOG_FORMAT=auto renders for humans on a terminal and JSON elsewhere. Stdlib
    records (uvicorn's among them) also carry `logger`, the name of the logger that wrote them.
    """
    out = stream or sys.stderr
    level = getattr(logging, settings.log_level)
    as_json = settings.log_format == "json" or (settings.log_format == "auto" and not out.isatty())
    # JSON wants the traceback as a string field; the console renderer draws exceptions itself
    finish: list[structlog.typing.Processor] = (
        [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
        if as_json
        else [structlog.dev.ConsoleRenderer(colors=out.isatty())]
    )
    structlog.configure(
        processors=[*_SHARED, structlog.processors.StackInfoRenderer(), *finish],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # one write per line, so a stdlib record written from another thread never splits one
        logger_factory=structlog.WriteLoggerFactory(file=out),
        # not cached: a reconfigured process (tests, embedding apps) must not keep writing to an old stream
        cache_logger_on_first_use=False,
    )
    _route_stdlib_logging(out, level, finish)


_UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


def _route_stdlib_logging(out: TextIO, level: int, finish: list[structlog.typing.Processor]) -> None:
    """Render stdlib records with structlog's processors, on the same stream."""
    handler = _StructlogHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*_SHARED, structlog.stdlib.add_logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *finish],
        )
    )
    root = logging.getLogger()
    _remove_own_handlers(root)
    root.addHandler(handler)
    # libraries speak from WARNING up; uvicorn's start and stop lines are the server's own, at LOG_LEVEL
    root.setLevel(max(level, logging.WARNING))
    logging.getLogger("uvicorn").setLevel(level)
    for name in _UVICORN_LOGGERS:
        # uvicorn's default log config (an embedding app may apply it) gives these handlers of their
        # own and stops propagation: every line must come through the one root handler instead
        own = logging.getLogger(name)
        own.handlers.clear()
        own.propagate = True
        own.disabled = False
    logging.captureWarnings(True)  # warnings.warn(...) becomes a `py.warnings` record, rendered alike


def reset_logging() -> None:
    """Undo `configure_logging`: structlog's defaults, and the stdlib root as Python starts it."""
    structlog.reset_defaults()
    root = logging.getLogger()
    _remove_own_handlers(root)
    root.setLevel(logging.WARNING)
    logging.getLogger("uvicorn").setLevel(logging.NOTSET)
    logging.captureWarnings(False)


def _remove_own_handlers(root: logging.Logger) -> None:
    """Remove what an earlier `configure_logging` installed; handlers of others (pytest's) stay."""
    for old in [h for h in root.handlers if isinstance(h, _StructlogHandler)]:
        root.removeHandler(old)


def quiet_library_logging() -> None:
    """For AgentKit used as a library: its log lines go to the stdlib's `logging`, unless structlog is configured.

    structlog left as it is prints every line to stdout, where a script's own output goes. Sent to
    `logging` instead, a script that configures nothing sees warnings and errors only, on stderr
    (the stdlib's last-resort handler), and one that calls `logging.basicConfig(level=logging.INFO)`
    (or configures its own handlers, or structlog) sees what it asked for. An application that has
    configured structlog itself is left alone.
    """
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,  # the stdlib logger's level decides, before any rendering
            structlog.contextvars.merge_contextvars,
            structlog.processors.format_exc_info,
            structlog.processors.KeyValueRenderer(key_order=["event"], sort_keys=True),
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
