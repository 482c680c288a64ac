"""The async SQLAlchemy engine every Postgres adapter shares."""

import re
from typing import Any, Final

import msgspec
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

_encoder = msgspec.json.Encoder(enc_hook=str)  # a value JSON cannot hold (a tool's object) is stored as its str()
_decoder = msgspec.json.Decoder()


# A JSON `\u0000` escape not itself escaped (preceded by an even number of backslashes).
_JSON_NUL: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def to_json(value: Any) -> str:
    """The JSON text a JSONB column stores for `value` (a Struct too), NUL characters as U+FFFD.

    The engine's serializer, and what a statement sent through asyncpg directly passes for a JSONB
    argument (the codec SQLAlchemy installs on each connection takes the text).
    """
    # msgspec encodes Structs directly, so adapters hand JSONB columns a Struct, not a dict copy of it.
    text = _encoder.encode(value).decode()
    if "\\u0000" in text:
        # JSONB cannot hold NUL (a binary tool output, say): it becomes U+FFFD rather than costing
        # the row, which PostgreSQL would refuse whole
        text = _JSON_NUL.sub(r"\1\\ufffd", text)
    return text


def _from_json(text: str) -> Any:
    return _decoder.decode(text)


def create_engine(
    url: URL,
    *,
    pool_size: int = 10,
    max_overflow: int = 10,
    connect_timeout_s: float = 5.0,
    pool_timeout_s: float = 5.0,
    statement_timeout_s: float | None = 10.0,
) -> AsyncEngine:
    """An asyncpg engine with msgspec as its JSON codec, and a bound on every wait.

    No pre-ping on checkout: it would add a round trip to every trace write. A connection the
    server dropped is noticed on use, invalidated, and replaced by the pool (SQLAlchemy then also
    recycles the connections pooled before it, which died with the same server). The statements
    sent through asyncpg directly (`driver`) check a connection at checkout instead, for free: one
    whose server said goodbye (a restart) is replaced before it costs a call.

    The three bounds are what keeps a hung server (frozen, or a network that drops packets) from
    hanging every caller with it; each failure surfaces as StoreUnavailable through `store_outage`.
    The statement bound is asyncpg's `command_timeout`, kept on the client: it holds when the server
    cannot answer at all, asyncpg cancels the statement on the server when it fires, and it needs no
    startup parameter (which PgBouncer would refuse).

    Args:
        url: An asyncpg URL (see `database_url`).
        pool_size: Connections kept open.
        max_overflow: Extra connections allowed under load.
        connect_timeout_s: How long to wait for a new connection (TCP and PostgreSQL's handshake),
            instead of asyncpg's 60 s default.
        pool_timeout_s: How long to wait for a pooled connection to come free.
        statement_timeout_s: How long one statement (BEGIN and COMMIT too) may take; None for no
            bound (migrations: DDL on a large table may take minutes).
    """
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_timeout=pool_timeout_s,
        pool_recycle=1800,
        json_serializer=to_json,
        json_deserializer=_from_json,
        connect_args={"timeout": connect_timeout_s, "command_timeout": statement_timeout_s},
    )
