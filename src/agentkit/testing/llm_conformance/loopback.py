"""A fake LLM provider on a loopback port: answers each request with the next scripted answer.

It speaks plain HTTP/1.1 on 127.0.0.1 (one request a connection, `Connection: close`), so the
adapter under test goes through its real SDK, its real HTTP stack and a real socket. What a wire
format looks like (paths, JSON, stream events, error bodies) is the `WireFormat`'s business; the
server only queues answers, records requests and sends what the format rendered: a JSON body, a
Server-Sent Events stream (event by event, each flushed), or nothing at all for a `Hang`.
"""

import asyncio
import contextlib
import json
from abc import abstractmethod
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any, Protocol

import msgspec

from agentkit.testing.llm_conformance.answers import Answer, Failure, Hang, Reply


class Rendered(msgspec.Struct, kw_only=True):
    """An answer in a wire format: a status, headers, and a JSON body or a list of SSE events (whole frames)."""

    status: int = 200
    headers: dict[str, str] = {}
    body: Any = None
    events: list[str] | None = None


class SentResult(msgspec.Struct, frozen=True, kw_only=True):
    """A tool result as a request carried it back to the model.

    Attributes:
        call_id: The call it answers, where the format names calls by id.
        text: The result's text as sent.
        is_error: Whether the request marked it as an error; None where the format has no such mark.
    """

    call_id: str | None
    text: str
    is_error: bool | None = None


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class WireFormat(Protocol):
    """How one provider's API looks on the wire, for the fake to answer in it."""

    @abstractmethod
    def wants_stream(self, request: RecordedRequest) -> bool:
        """Whether the request asks for a streamed answer."""

    @abstractmethod
    def render(self, answer: Reply | Failure, request: RecordedRequest, *, stream: bool) -> Rendered:
        """The answer as this API would send it (for a streamed request, as its events)."""

    @abstractmethod
    def tool_results(self, request: RecordedRequest) -> list[SentResult]:
        """The tool results the request carries back, in order (those of the last turn and any before)."""


class LoopbackLLMServer:
    """A fake provider on 127.0.0.1 answering with `answers`, in order, in `wire`'s format.

    Use it as an async context manager; `base_url` is `http://127.0.0.1:<port>`.

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(self, wire: WireFormat, answers: Iterable[Answer] = ()) -> None:
        self.wire = wire
        self.answers: list[Answer] = list(answers)
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._closing = asyncio.Event()
        self._port = 0

    @property
    def base_url(self) -> str:
        """The server's URL, without a path."""
        return f"http://127.0.0.1:{self._port}"

    async def __aenter__(self) -> "LoopbackLLMServer":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop listening and end every connection (a hanging one too)."""
        self._closing.set()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            if request is None:
                return
            self.requests.append(request)
            answer = self.answers.pop(0) if self.answers else Failure(status=400, message="the fake has no answer left")
            if isinstance(answer, Hang):
                await self._closing.wait()
                return
            rendered = self.wire.render(answer, request, stream=self.wire.wants_stream(request))
            await _write(writer, rendered, cut_after=answer.cut_after if isinstance(answer, Reply) else None)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client gave up (its timeout): nothing to answer
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    raw = await reader.readexactly(length) if length else b""
    body = json.loads(raw) if raw else None
    return RecordedRequest(method=parts[0], path=parts[1], headers=headers, body=body)


async def _write(writer: asyncio.StreamWriter, rendered: Rendered, *, cut_after: int | None = None) -> None:
    reason = HTTPStatus(rendered.status).phrase
    if rendered.events is None:
        payload = json.dumps(rendered.body).encode()
        head = {"content-type": "application/json", "content-length": str(len(payload))}
    else:
        payload = b""
        head = {"content-type": "text/event-stream", "cache-control": "no-cache"}
    head |= {"connection": "close", **rendered.headers}
    lines = "".join(f"{name}: {value}\r\n" for name, value in head.items())
    if cut_after is not None and rendered.events is None:
        payload = payload[: len(payload) // 2]  # the content-length promised more: the client sees a cut body
    writer.write(f"HTTP/1.1 {rendered.status} {reason}\r\n{lines}\r\n".encode("latin-1") + payload)
    await writer.drain()
    events = rendered.events or []
    if cut_after is not None:
        events = events[:cut_after]  # then the connection closes, the stream unfinished
    for event in events:
        writer.write(event.encode())
        await writer.drain()  # one event at a time, as a provider writes them
        await asyncio.sleep(0)


def text_pieces(text: str) -> list[str]:
    """The text in word pieces that keep their white space (they join back to it), as a stream sends it."""
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    return [piece for piece in pieces if piece]
