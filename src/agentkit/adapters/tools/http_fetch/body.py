"""Reading a response body within a byte budget, and turning it into text.

The budget counts decoded bytes, and decompression is done here with an output limit rather
than by httpx, so a small gzip bomb cannot expand past the limit in one step.
"""

import codecs
import zlib
from typing import Final, Protocol

import httpx

from agentkit.adapters.tools.errors import FetchFailed
from agentkit.adapters.tools.http_fetch.html_text import html_to_text

_TEXT_TYPES: Final = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-yaml", "application/yaml"}
)
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})


class _Decoder(Protocol):
    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...


def _decoder(content_encoding: str) -> _Decoder | None:
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise FetchFailed(f"the response uses the content encoding {content_encoding!r}, which is not supported")


async def read_limited(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """Read at most `max_bytes` of the decoded body.

    Returns:
        The body and whether it was cut at the limit.
    """
    decoder = _decoder(response.headers.get("content-encoding", ""))
    body = bytearray()
    try:
        async for chunk in response.aiter_raw():
            room = max_bytes + 1 - len(body)
            body += decoder.decompress(chunk, room) if decoder is not None else chunk[:room]
            if len(body) > max_bytes:
                return bytes(body[:max_bytes]), True
    except zlib.error:
        raise FetchFailed("the response body is not valid compressed data") from None
    return bytes(body), False


def body_to_text(body: bytes, content_type: str | None) -> str:
    """The body as text: HTML reduced to its visible text, other text types decoded as they are.

    Raises:
        FetchFailed: the body is not text (an image, a PDF, binary data).
    """
    media_type, charset = _parse_content_type(content_type)
    if media_type and not _is_text(media_type):
        raise FetchFailed(f"the response is {media_type}, not text")
    if not media_type and b"\x00" in body[:4096]:
        raise FetchFailed("the response is binary data, not text")
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:  # a codec that is not a text encoding, such as rot13
        text = body.decode("utf-8", errors="replace")
    if media_type in _HTML_TYPES or (not media_type and text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))):
        return html_to_text(text)
    return text


def _is_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
        or media_type in _HTML_TYPES
    )


def _parse_content_type(content_type: str | None) -> tuple[str, str]:
    if not content_type:
        return "", "utf-8"
    media_type, *params = (part.strip() for part in content_type.split(";"))
    charset = "utf-8"
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return media_type.lower(), charset
