"""A webhook receiver on 127.0.0.1 (a free port), verifying each delivery's Standard Webhooks signature.

A raw asyncio HTTP/1.1 server, so the test sees exactly what arrived: headers, body, whether the
signature verified. It answers each request with the next status of `statuses` (then 200), or
holds the answer while `hold` is set.
"""

import asyncio
import base64
import contextlib
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

WAIT_S = 30.0  # a bound for a hung test, never a timing assertion


def new_secret() -> str:
    """A fresh Standard Webhooks secret."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


@dataclass
class Received:
    """One request the receiver got."""

    headers: dict[str, str]
    body: bytes
    payload: Any  # the verified JSON, or None when the signature did not verify
    answered: int

    @property
    def verified(self) -> bool:
        """Whether the signature verified with the receiver's secret."""
        return self.payload is not None


@dataclass
class Receiver:
    """The receiver; `url` is where it listens, `received` what arrived, in order."""

    secret: str
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    port: int = 0
    hold: asyncio.Event | None = None
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def url(self) -> str:
        """The receiver's URL on 127.0.0.1."""
        return f"http://127.0.0.1:{self.port}/hooks"

    def url_for(self, host: str) -> str:
        """The receiver's URL under another host name (the test's resolver maps it to 127.0.0.1)."""
        return f"http://{host}:{self.port}/hooks"

    async def wait_for(self, count: int) -> list[Received]:
        """Wait until `count` requests have arrived; return them."""
        async with asyncio.timeout(WAIT_S), self._arrived:
            await self._arrived.wait_for(lambda: len(self.received) >= count)
        return self.received[:count]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read one request, verify it, answer it."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if self.hold is not None:
                await self.hold.wait()
            status = self.statuses.pop(0) if self.statuses else 200
            try:
                payload = Webhook(self.secret).verify(body, headers)
            except WebhookVerificationError:
                payload = None
            async with self._arrived:
                self.received.append(Received(headers=headers, body=body, payload=payload, answered=status))
                self._arrived.notify_all()
            head_line = f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            writer.write(f"{head_line}Content-Length: 0\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def receiving(secret: str, statuses: Sequence[int] = ()) -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port for the block."""
    receiver = Receiver(secret=secret, statuses=list(statuses))
    server = await asyncio.start_server(receiver.handle, "127.0.0.1", 0)
    receiver.port = server.sockets[0].getsockname()[1]
    try:
        yield receiver
    finally:
        server.close()
        await server.wait_closed()


def closed_port() -> int:
    """A loopback port nothing listens on (a receiver that is down)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
