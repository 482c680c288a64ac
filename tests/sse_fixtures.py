"""Serving an app on a loopback socket in the test's own event loop, and reading Server-Sent Events with httpx.

httpx's ASGI transport hands a response over only once the app finished it, so a stream is read
from a real server: uvicorn on 127.0.0.1, in the test's loop (a gate a test's tool waits on is set
from the test and wakes the run at once).
"""

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from litestar import Litestar


@dataclass
class Event:
    """One SSE event: its id, type and decoded JSON data; `comments` are the comments before it."""

    id: str | None
    event: str | None
    data: Any
    comments: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def served(app: Litestar, *, lifespan: bool = False) -> AsyncIterator[str]:
    """The app under uvicorn on a free loopback port; yields the base URL.

    Args:
        app: The app.
        lifespan: Enter the app's lifespan here (off for an app an `ApiClient` already started).
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_config=None, lifespan="on" if lifespan else "off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                await task  # start-up failed: raise its error
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


async def events_of(response: httpx.Response) -> AsyncIterator[Event]:
    """The events of a `text/event-stream` response as they arrive (comment-only blocks included, data None)."""
    fields: dict[str, str] = {}
    data: list[str] = []
    comments: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if fields or data or comments:
                yield Event(
                    id=fields.get("id"),
                    event=fields.get("event"),
                    data=json.loads("\n".join(data)) if data else None,
                    comments=comments,
                )
            fields, data, comments = {}, [], []
        elif line.startswith(":"):
            comments.append(line[1:].strip())
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            else:
                fields[name] = value


async def read_all(client: httpx.AsyncClient, path: str, **headers: str) -> list[Event]:
    """Every event of a stream, to its end (keep-alive comments left out)."""
    async with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        return [event async for event in events_of(response) if event.event is not None]
