"""The embedded Redis stops cleanly and says only what happened.

(A process that joins the server's embedded PostgreSQL and lets it go again is tested end to end
in test_newcomer_flow.py: the server counts its users per process.)"""

import logging
from pathlib import Path

import pytest
import structlog

from agentkit.adapters.embedded import EmbeddedRedis

pytestmark = pytest.mark.integration


def test_a_redis_stop_is_clean_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with structlog.testing.capture_logs() as events:
        server = EmbeddedRedis(tmp_path / "redis")
        server.start()
        server.stop()

    assert [event["event"] for event in events] == ["embedded_redis_started", "embedded_redis_stopped"]
    assert not [record for record in caplog.records if "shutdown failed" in record.getMessage().lower()]
