"""One log format per process: stdlib records (uvicorn's, any library's) render like structlog's own."""

import io
import json
import logging
import warnings
from typing import Any

import structlog

from agentkit.entrypoints.wiring.logging import configure_logging
from agentkit.entrypoints.wiring.settings import load_settings


def configured(log_format: str, level: str = "INFO") -> io.StringIO:
    stream = io.StringIO()
    configure_logging(load_settings({"LOG_FORMAT": log_format, "LOG_LEVEL": level}).logging, stream=stream)
    return stream


def json_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_uvicorn_record_is_a_json_line_like_structlogs_own() -> None:
    stream = configured("json")

    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
    structlog.get_logger("agentkit").warning("rate_limited", owner="a")

    stdlib_line, own_line = json_lines(stream)
    assert stdlib_line["event"] == "Invalid HTTP request received."
    assert stdlib_line["level"] == own_line["level"] == "warning"
    assert stdlib_line["logger"] == "uvicorn.error"
    assert stdlib_line["timestamp"].endswith("Z")
    assert own_line["event"] == "rate_limited"
    assert set(own_line) - set(stdlib_line) == {"owner"}


def test_uvicorns_start_up_lines_show_at_log_level_while_other_libraries_stay_at_warning() -> None:
    stream = configured("json", level="INFO")

    logging.getLogger("uvicorn.error").info("Uvicorn running on %s", "http://127.0.0.1:8000")
    logging.getLogger("httpx").info("HTTP Request: GET http://127.0.0.1:1")
    logging.getLogger("httpx").warning("retrying")

    assert [(line["logger"], line["event"]) for line in json_lines(stream)] == [
        ("uvicorn.error", "Uvicorn running on http://127.0.0.1:8000"),
        ("httpx", "retrying"),
    ]


def test_a_stdlib_record_carries_the_bound_context_and_its_traceback() -> None:
    stream = configured("json")
    structlog.contextvars.bind_contextvars(request_id="req-1")
    empty: dict[str, int] = {}
    try:
        try:
            empty["missing"]
        except KeyError:
            logging.getLogger("some.library").exception("lookup failed")
    finally:
        structlog.contextvars.clear_contextvars()

    (line,) = json_lines(stream)
    assert line["request_id"] == "req-1"
    assert line["level"] == "error"
    assert "KeyError: 'missing'" in line["exception"]


def test_a_python_warning_is_a_log_line_too() -> None:
    stream = configured("json")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("deprecated thing", DeprecationWarning, stacklevel=1)

    (line,) = json_lines(stream)
    assert line["logger"] == "py.warnings"
    assert "DeprecationWarning: deprecated thing" in line["event"]


def test_console_format_renders_stdlib_records_for_humans() -> None:
    stream = configured("console")

    logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")

    (line,) = stream.getvalue().splitlines()
    assert not line.startswith("{")
    assert "warning" in line
    assert "Invalid HTTP request received." in line
    assert "uvicorn.error" in line


def test_configuring_again_moves_every_line_to_the_new_stream_once() -> None:
    first = configured("json")
    second = configured("json")

    logging.getLogger("uvicorn.error").warning("once")
    structlog.get_logger().warning("also once")

    assert first.getvalue() == ""
    assert [line["event"] for line in json_lines(second)] == ["once", "also once"]
