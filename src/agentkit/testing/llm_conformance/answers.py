"""What a fake provider is told to answer, in neutral terms; each wire format renders it its own way.

A scenario of the conformance suite is a list of answers, one per request the client makes:
a `Reply` (text, calls, a refusal, a stop at the token limit), a `Failure` (an HTTP error with
its headers), or a `Hang` (no answer at all, until the client gives up).
"""

from typing import Any, Literal

import msgspec

Stop = Literal["stop", "tool_calls", "refusal", "length"]


class FakeCall(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call the fake model makes.

    Attributes:
        id: The call's id (a wire format that has none, Gemini's, may leave it out).
        name: The tool it calls.
        arguments: The arguments, as a JSON object.
        raw_arguments: Argument text that is not a JSON object (a bad call), sent instead of
            `arguments` where the wire format carries arguments as text.
    """

    id: str
    name: str
    arguments: dict[str, Any] = {}
    raw_arguments: str | None = None


class FakeUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens, counted the neutral way: `input_tokens` includes the cache reads and writes."""

    input_tokens: int = 20
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Reply(msgspec.Struct, frozen=True, kw_only=True, tag="reply"):
    """A 200 answer.

    Attributes:
        text: The model's text.
        calls: Its tool calls, in order.
        stop: Why it stopped (`tool_calls` is implied by calls and may be left as `stop`).
        refusal: The refusal's explanation, for `stop="refusal"`.
        usage: The tokens to report; None lets the wire format count them from the request
            (the Anthropic fake then also plays its prompt cache).
        cut_after: Break the connection part-way: a stream after this many events, a whole
            answer after half its body (a dropped connection, a crashed server).
    """

    text: str = ""
    calls: tuple[FakeCall, ...] = ()
    stop: Stop = "stop"
    refusal: str | None = None
    usage: FakeUsage | None = FakeUsage()
    cut_after: int | None = None


class Failure(msgspec.Struct, frozen=True, kw_only=True, tag="failure"):
    """An HTTP error answer: a status, the provider's error message, and headers (`retry-after`)."""

    status: int
    message: str = "fake provider error"
    headers: dict[str, str] = {}


class Hang(msgspec.Struct, frozen=True, kw_only=True, tag="hang"):
    """No answer: the request is held open until the server closes, so the client's timeout ends it."""


Answer = Reply | Failure | Hang
"""One fake answer."""
