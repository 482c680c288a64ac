"""read_file: UTF-8 text files below one folder, and nothing else.

The rule is checked on the resolved path: `..`, absolute paths and symlinks are all followed
by `Path.resolve` first, and whatever comes out must still lie below the resolved folder.
Names are never URL- or otherwise decoded, so `%2e%2e` is a file name, not a way out.
The file is then opened without following a final symlink and without blocking (a FIFO would
otherwise hang the tool), and must be a regular file within the size limit.
"""

import errno
import os
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from agentkit.adapters.tools.errors import FileRefused
from agentkit.application.tools import Tool, tool

_MAX_PATH_CHARS = 1024


def resolve_inside(base_dir: Path, path: str) -> Path:
    """Resolve `path` against `base_dir` and make sure the result stays inside it.

    Args:
        base_dir: The allowed folder.
        path: A path relative to it, as the model wrote it.

    Returns:
        The resolved, absolute path of an existing file or folder below `base_dir`.

    Raises:
        FileRefused: the path is absolute, escapes the folder, or does not exist.
    """
    if not path or len(path) > _MAX_PATH_CHARS or "\x00" in path:
        raise FileRefused("give a non-empty relative path without NUL characters")
    # A Windows-style absolute path ("C:\\x", "\\\\server\\x") is refused too, wherever we run.
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive:
        raise FileRefused(f"{path!r} is an absolute path; give a path relative to the file folder")
    try:
        root = base_dir.resolve(strict=True)
    except OSError:
        raise FileRefused("the file folder does not exist") from None
    try:
        # Not strict: containment is decided first, so the answer for a path outside the folder
        # never depends on whether that outside file exists (no probing of the server's files).
        resolved = (root / path).resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        raise FileRefused(f"cannot resolve {path!r}") from None
    if not resolved.is_relative_to(root):
        raise FileRefused(f"{path!r} is outside the file folder")
    if not resolved.exists():
        raise FileRefused(f"no such file: {path!r}")
    return resolved


def read_text_file(base_dir: Path, path: str, max_bytes: int) -> str:
    """Read a UTF-8 text file below `base_dir`.

    Raises:
        FileRefused: the path is not allowed, or the file is not a regular UTF-8 text file
            of at most `max_bytes` bytes.
    """
    resolved = resolve_inside(base_dir, path)
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last component became a symlink after resolving
            raise FileRefused(f"{path!r} is a symlink") from None
        if exc.errno == errno.EISDIR:
            raise FileRefused(f"{path!r} is a folder, not a file") from None
        raise FileRefused(f"cannot open {path!r}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileRefused(f"{path!r} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{path!r} is not a regular file")
        if info.st_size > max_bytes:
            raise FileRefused(f"{path!r} is {info.st_size} bytes; the limit is {max_bytes}")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(max_bytes + 1)  # the file may have grown since fstat
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileRefused(f"{path!r} is larger than the limit of {max_bytes} bytes")
    return _decode_text(data, path)


def _decode_text(data: bytes, path: str) -> str:
    if b"\x00" in data:
        raise FileRefused(f"{path!r} is a binary file; only text files can be read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FileRefused(f"{path!r} is not UTF-8 text (it may be a binary file)") from None


def make_read_file_tool(base_dir: Path, max_bytes: int) -> Tool[[str], str]:
    """The `read_file` tool for files below `base_dir` of at most `max_bytes` bytes."""

    # bounded by construction, and a closure over its limits: it stays in this process whatever
    # TOOL_ISOLATION says (a worker process imports tools by name)
    @tool(name="read_file", idempotent=True, isolation="thread")
    def read_file(path: str) -> str:
        """Read a UTF-8 text file from the agent's file folder.

        Args:
            path: Path of the file relative to the file folder, for example `notes/todo.txt`.
        """
        return read_text_file(base_dir, path, max_bytes)

    return read_file
