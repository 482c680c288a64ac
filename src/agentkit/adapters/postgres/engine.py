"""The async SQLAlchemy engine every Postgres adapter shares."""

from typing import Any

import msgspec
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

_encoder = msgspec.json.Encoder(enc_hook=str)  # a value JSON cannot hold (a tool's object) is stored as its str()
_decoder = msgspec.json.Decoder()


def _to_json(value: Any) -> str:
    # msgspec encodes Structs directly, so adapters hand JSONB columns a Struct, not a dict copy of it.
    return _encoder.encode(value).decode()


def _from_json(text: str) -> Any:
    return _decoder.decode(text)


def create_engine(
    url: URL,
    *,
    pool_size: int = 10,
    max_overflow: int = 10,
    connect_timeout_s: float = 5.0,
) -> AsyncEngine:
    """An asyncpg engine with msgspec as its JSON codec.

    No pre-ping on checkout: it would add a round trip to every trace write. A connection the
    server dropped is noticed on use, invalidated, and replaced by the pool.

    Args:
        url: An asyncpg URL (see `database_url`).
        pool_size: Connections kept open.
        max_overflow: Extra connections allowed under load.
        connect_timeout_s: How long to wait for a new connection before failing; keeps a server
            that is down (or a blackholed address) from stalling callers for asyncpg's 60 s default.
    """
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_recycle=1800,
        json_serializer=_to_json,
        json_deserializer=_from_json,
        connect_args={"timeout": connect_timeout_s},
    )
