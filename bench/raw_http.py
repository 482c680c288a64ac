"""A minimal HTTP/1.1 load client: kept-alive connections and pre-encoded requests, so load costs little CPU.

httpx spends milliseconds of CPU per request once hundreds are in flight (its pool, anyio, h11). On a
two-core machine that starves the server under test, and the client's own queueing then reads as the
server's latency: at 200 requests a second the generator used 93 % of a core while the server used 19 %.
This client writes the same bytes every time and reads a status line, headers and a Content-Length
body, a few tens of microseconds a request. It speaks only what `agentkit serve` answers.
"""

import asyncio
import time
from urllib.parse import urlsplit

StreamPair = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class RawLoadClient:
    """POSTs one fixed body to targets over at most `connections` connections at once.

    Connections idle for longer than `keepalive_s` are closed rather than reused, so none is taken
    just as the server closes it (uvicorn closes idle connections after 5 s).

    Args:
        body: The JSON body of every request.
        connections: Requests in flight at most (each on a connection of its own).
        keepalive_s: How long an idle connection may be reused.
        timeout_s: How long one request may take.
    """

    def __init__(self, body: bytes, *, connections: int, keepalive_s: float = 2.0, timeout_s: float = 30.0) -> None:
        self._body = body
        self._slots = asyncio.Semaphore(connections)
        self._keepalive_s = keepalive_s
        self._timeout_s = timeout_s
        self._idle: dict[tuple[str, int], list[tuple[StreamPair, float]]] = {}
        self._requests: dict[tuple[str, tuple[tuple[str, str], ...]], bytes] = {}

    async def post(self, url: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """POST the body; the status, the Content-Type and the body of the answer.

        Raises:
            OSError, asyncio.IncompleteReadError, TimeoutError, ValueError: the exchange failed.
        """
        parts = urlsplit(url)
        address = (parts.hostname or "127.0.0.1", parts.port or 80)
        request = self._request(url, headers)
        async with self._slots:
            pair = self._reuse(address) or await asyncio.open_connection(*address)
            try:
                async with asyncio.timeout(self._timeout_s):
                    status, content_type, body, keep = await self._exchange(pair, request)
            except BaseException:
                pair[1].close()
                raise
            if keep:
                self._idle.setdefault(address, []).append((pair, time.monotonic()))
            else:
                pair[1].close()
        return status, content_type, body

    async def aclose(self) -> None:
        """Close the idle connections."""
        for pairs in self._idle.values():
            for (_, writer), _ in pairs:
                writer.close()
        self._idle.clear()

    def _request(self, url: str, headers: dict[str, str]) -> bytes:
        key = (url, tuple(sorted(headers.items())))
        if key not in self._requests:
            parts = urlsplit(url)
            lines = [f"POST {parts.path or '/'} HTTP/1.1", f"host: {parts.netloc}", "content-type: application/json"]
            lines += [f"content-length: {len(self._body)}", *(f"{name}: {value}" for name, value in headers.items())]
            self._requests[key] = ("\r\n".join(lines) + "\r\n\r\n").encode() + self._body
        return self._requests[key]

    def _reuse(self, address: tuple[str, int]) -> StreamPair | None:
        pairs = self._idle.get(address, [])
        now = time.monotonic()
        while pairs:
            pair, since = pairs.pop()  # the most recently used first
            if now - since < self._keepalive_s and not pair[1].is_closing():
                return pair
            pair[1].close()
        return None

    @staticmethod
    async def _exchange(pair: StreamPair, request: bytes) -> tuple[int, str, bytes, bool]:
        reader, writer = pair
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        fields = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if "content-length" not in fields:
            raise ValueError(f"no Content-Length in the answer to {status_line!r}")
        body = await reader.readexactly(int(fields["content-length"]))
        keep = fields.get("connection", "").lower() != "close"
        return int(status_line.split(" ", 2)[1]), fields.get("content-type", ""), body, keep
