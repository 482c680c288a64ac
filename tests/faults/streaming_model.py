"""An OpenAI-compatible model server on loopback that streams its answers a piece at a time, paced by the test.

Every request streams (`stream: true`, usage in the last chunk, as the OpenAI adapter asks). The n-th
request (from 1) answers `pieces(n)`: `"a1 a2 ..."` for the first, `"b1 b2 ..."` for the second, so a
stored answer and every fragment say which request wrote them. After each piece the server waits for
the test's `go()` (it reads each fragment before the next is written); the first request stops after
`hang_after` pieces and holds its connection open, answering nothing more: a worker killed there dies
mid-stream.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PACE_WAIT_S = 120.0  # generous: only a test that stopped reading waits this long


def pieces(request_no: int, count: int) -> list[str]:
    """The pieces of the n-th request's answer: its letter and a number each (`a1 `, `a2 `, ...)."""
    letter = chr(ord("a") + request_no - 1)
    return [f"{letter}{n} " for n in range(1, count + 1)]


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    choices = [] if usage is not None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    body = {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "fault-model",
        "choices": choices,
        "usage": usage,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class PacedStreamingModel:
    """The server; `requests` counts the requests it took, `started(n)` waits until the n-th came.

    Args:
        count: Pieces in each answer.
        hang_after: How many pieces the first request sends before it hangs.
    """

    def __init__(self, *, count: int = 6, hang_after: int = 3) -> None:
        self.count = count
        self.hang_after = hang_after
        self.requests = 0
        self._go = threading.Semaphore(0)
        self._arrived = threading.Condition()
        self._closing = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                with model._arrived:
                    model.requests += 1
                    request_no = model.requests
                    model._arrived.notify_all()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self._write(_chunk({"role": "assistant", "content": ""}))
                for number, piece in enumerate(pieces(request_no, model.count), 1):
                    self._write(_chunk({"content": piece}))
                    if request_no == 1 and number == model.hang_after:
                        model._closing.wait(PACE_WAIT_S)  # mid-stream, until its reader is killed
                        return
                    model._go.acquire(timeout=PACE_WAIT_S)
                self._write(_chunk({}, finish="stop"))
                self._write(
                    _chunk({}, usage={"prompt_tokens": 10, "completion_tokens": model.count, "total_tokens": 16})
                )
                self._write(b"data: [DONE]\n\n")

            def _write(self, data: bytes) -> None:
                self.wfile.write(data)
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def go(self) -> None:
        """Let the answer being written send its next piece."""
        self._go.release()

    def __enter__(self) -> "PacedStreamingModel":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
