"""A tool worker process: it reads calls from its parent, runs each, and writes the result back.

Started by path (`python -I worker.py`), so it imports none of AgentKit's packages until a tool's
module does: the standard library only, for a start in milliseconds. Its parent speaks to it over
its stdin and stdout, in frames (a 4-byte big-endian length, then a pickle):

    parent -> worker: the hello (sys.path, the memory limit, the parent's pid, the modules to import
                      before it is ready), then one call at a time: (module, qualname, cpu_s, kwargs)
    worker -> parent: ("ready", pid) once, then one reply per call:
                      ("ok", value) | ("tool_error", message) | ("raised", type name, message)
                      | ("memory", message) (it then exits: the parent replaces it)

The limits are its own (resource.setrlimit): address space for memory, set once; CPU time per call
(the soft limit moved to what it has used plus the call's allowance: past it the kernel sends
SIGXCPU, which ends the process); no core files. It dies with its parent (PR_SET_PDEATHSIG). Its
stdin and stdout are kept for the frames: a tool that prints writes to stderr, one that reads
stdin reads nothing.
"""

import importlib
import math
import os
import pickle
import resource
import signal
import struct
import sys
from collections.abc import Callable
from typing import Any

_LENGTH = struct.Struct(">I")
_PR_SET_PDEATHSIG = 1


def encode_frame(value: Any) -> bytes:
    """A value as one frame: its pickle behind its length."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def frames_in(buffer: bytearray) -> list[bytes]:
    """Take the whole frames at the start of `buffer` out of it (their payloads, still pickled)."""
    found: list[bytes] = []
    start = 0
    while len(buffer) - start >= _LENGTH.size:
        (size,) = _LENGTH.unpack_from(buffer, start)
        end = start + _LENGTH.size + size
        if len(buffer) < end:
            break
        found.append(bytes(buffer[start + _LENGTH.size : end]))
        start = end
    del buffer[:start]
    return found


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int) -> Any:
    (size,) = _LENGTH.unpack(_read_exactly(fd, _LENGTH.size))
    return _read_exactly(fd, size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _die_with_parent(parent: int) -> None:
    """Be killed when the parent dies (Linux), even mid-call: no orphan spins on after a crash."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it died before the line above
        os._exit(0)


def _limit_cpu(cpu_s: float, hard: int) -> None:
    """Allow the next call `cpu_s` seconds of CPU from now (the limit counts the process's whole life)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _resolve(module: str, qualname: str) -> Callable[..., Any]:
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found  # type: ignore[no-any-return]  # a function, or a `@tool` (called as its function)


def _reply_to(exc: BaseException) -> tuple[str, ...]:
    errors = sys.modules.get("agentkit.application.tools.errors")
    if errors is not None and isinstance(exc, errors.ToolError):
        return ("tool_error", str(exc))
    return ("raised", type(exc).__name__, str(exc))


def _answer(functions: dict[tuple[str, str], Callable[..., Any]], payload: bytes, cpu_hard: int) -> tuple[Any, ...]:
    try:
        module, qualname, cpu_s, kwargs = pickle.loads(payload)  # noqa: S301 - from the parent, over its own pipe
    except Exception as exc:
        return ("tool_error", f"the call's arguments cannot be read in its worker process: {exc}")
    try:
        fn = functions.get((module, qualname))
        if fn is None:
            fn = functions[(module, qualname)] = _resolve(module, qualname)
        _limit_cpu(cpu_s, cpu_hard)
        return ("ok", fn(**kwargs))
    except MemoryError as exc:
        return ("memory", str(exc))
    except (Exception, SystemExit) as exc:
        return _reply_to(exc)


def main() -> None:
    """Serve calls until the parent closes the pipe (or kills the process)."""
    requests, replies = os.dup(0), os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(2, 1)
    hello = pickle.loads(_read_frame(requests))  # noqa: S301 - from the parent, over its own pipe
    sys.path[:] = hello["sys_path"]
    _die_with_parent(hello["parent"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if hello["memory_bytes"]:
        limit = hello["memory_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    for module in hello["preload"]:
        # the tools' modules the pool has run before: a worker that replaces a killed one imports them
        # now, not inside its first call's time limit (a module that fails says so on that call)
        try:
            importlib.import_module(module)
        except Exception:  # noqa: S112 - reported by the call that needs it
            continue
    _write_all(replies, encode_frame(("ready", os.getpid())))
    functions: dict[tuple[str, str], Callable[..., Any]] = {}
    while True:
        try:
            payload = _read_frame(requests)
        except EOFError:
            return
        reply = _answer(functions, payload, cpu_hard)
        try:
            data = encode_frame(reply)
        except MemoryError:
            reply, data = ("memory", "no memory left to send the result"), b""
        except Exception as exc:
            data = encode_frame(("tool_error", f"the tool's result cannot be sent back from its process: {exc}"))
        if reply[0] == "memory":
            # what ran out of memory may have left the process in any state: it answers and goes
            _write_all(replies, data or encode_frame(reply))
            os._exit(0)
        _write_all(replies, data)


if __name__ == "__main__":
    main()
