"""read_file: only below the base folder (resolved paths, symlinks followed), size limit, text only."""

import os
from pathlib import Path

import pytest

from agentkit.adapters.tools.errors import FileRefused
from agentkit.adapters.tools.read_file import make_read_file_tool, read_text_file, resolve_inside

LIMIT = 1000


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A base folder with files inside, and a secret outside it (a sibling folder and a parent file)."""
    base = tmp_path / "files"
    (base / "notes").mkdir(parents=True)
    (base / "notes" / "todo.txt").write_text("buy milk\n", encoding="utf-8")
    (base / "readme.md").write_text("# hello\nwörld ✓\n", encoding="utf-8")
    (base / "%2e%2e").mkdir()  # a folder really named like an encoded "..", to show names are literal
    (base / "%2e%2e" / "inside.txt").write_text("literal\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    (tmp_path / "files-evil").mkdir()  # a sibling whose name starts like the base folder
    (tmp_path / "files-evil" / "x.txt").write_text("sibling secret\n", encoding="utf-8")
    return base


def test_reads_a_text_file_below_the_folder(tree: Path) -> None:
    assert read_text_file(tree, "notes/todo.txt", LIMIT) == "buy milk\n"
    assert read_text_file(tree, "readme.md", LIMIT) == "# hello\nwörld ✓\n"
    assert read_text_file(tree, "./notes/../readme.md", LIMIT).startswith("# hello")


def test_strips_a_utf8_byte_order_mark(tree: Path) -> None:
    (tree / "bom.txt").write_bytes(b"\xef\xbb\xbfhi")
    assert read_text_file(tree, "bom.txt", LIMIT) == "hi"


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "../../etc/passwd",
        "notes/../../secret.txt",
        "notes/../../../../../../../../etc/passwd",
        "./../secret.txt",
        "../files-evil/x.txt",
        "notes/./../.././secret.txt",
    ],
)
def test_refuses_dot_dot_escapes(tree: Path, path: str) -> None:
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, path, LIMIT)


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        str(Path("/") / "etc" / "hostname"),
        "//etc/passwd",
        "C:\\Windows\\win.ini",
        "c:/windows/win.ini",
        "\\\\server\\share\\x",
        "C:relative-to-drive.txt",
    ],
)
def test_refuses_absolute_paths(tree: Path, path: str) -> None:
    with pytest.raises(FileRefused, match="absolute path"):
        read_text_file(tree, path, LIMIT)


def test_refuses_the_absolute_path_of_a_file_inside_too(tree: Path) -> None:
    # Even a path that points inside must be relative: the model never learns the real location.
    with pytest.raises(FileRefused, match="absolute path"):
        read_text_file(tree, str(tree / "readme.md"), LIMIT)


@pytest.mark.parametrize(
    "path",
    [
        "%2e%2e/secret.txt",
        "%2e%2e%2fsecret.txt",
        "..%2fsecret.txt",
        "%252e%252e/secret.txt",
        "..\\secret.txt",
        "\uff0e\uff0e/secret.txt",  # full-width dots
        "..%c0%afsecret.txt",  # overlong UTF-8 slash
        "notes/..;/../secret.txt",
    ],
)
def test_encoded_forms_are_literal_names_never_escapes(tree: Path, path: str) -> None:
    with pytest.raises(FileRefused, match="no such file"):
        read_text_file(tree, path, LIMIT)


def test_a_literally_named_percent_folder_is_just_a_folder(tree: Path) -> None:
    assert read_text_file(tree, "%2e%2e/inside.txt", LIMIT) == "literal\n"


@pytest.mark.parametrize("path", ["", "a\x00b", "x" * 2000])
def test_refuses_empty_nul_and_overlong_paths(tree: Path, path: str) -> None:
    with pytest.raises(FileRefused, match="non-empty relative path"):
        read_text_file(tree, path, LIMIT)


def test_refuses_a_symlink_to_a_file_outside(tree: Path) -> None:
    (tree / "link.txt").symlink_to(tree.parent / "secret.txt")
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "link.txt", LIMIT)


def test_refuses_a_symlinked_folder_pointing_outside(tree: Path) -> None:
    (tree / "up").symlink_to(tree.parent, target_is_directory=True)
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "up/secret.txt", LIMIT)


def test_refuses_a_symlink_to_an_absolute_system_file(tree: Path) -> None:
    (tree / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "passwd", LIMIT)


def test_refuses_a_chain_of_symlinks_that_ends_outside(tree: Path) -> None:
    (tree / "b").symlink_to(tree.parent / "secret.txt")
    (tree / "a").symlink_to(tree / "b")
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "a", LIMIT)


def test_follows_a_symlink_that_stays_inside(tree: Path) -> None:
    (tree / "todo-link").symlink_to(tree / "notes" / "todo.txt")
    assert read_text_file(tree, "todo-link", LIMIT) == "buy milk\n"


def test_refuses_a_symlink_loop(tree: Path) -> None:
    (tree / "loop1").symlink_to(tree / "loop2")
    (tree / "loop2").symlink_to(tree / "loop1")
    with pytest.raises(FileRefused, match=r"cannot resolve|no such file"):
        read_text_file(tree, "loop1", LIMIT)


def test_a_symlinked_base_folder_still_works_and_still_confines(tmp_path: Path, tree: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(tree, target_is_directory=True)
    assert read_text_file(alias, "notes/todo.txt", LIMIT) == "buy milk\n"
    with pytest.raises(FileRefused, match="outside"):
        read_text_file(alias, "../secret.txt", LIMIT)


def test_refuses_files_over_the_size_limit(tree: Path) -> None:
    (tree / "big.txt").write_text("x" * (LIMIT + 1), encoding="utf-8")
    with pytest.raises(FileRefused, match=f"{LIMIT + 1} bytes; the limit is {LIMIT}"):
        read_text_file(tree, "big.txt", LIMIT)
    (tree / "exact.txt").write_text("x" * LIMIT, encoding="utf-8")
    assert len(read_text_file(tree, "exact.txt", LIMIT)) == LIMIT


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"\x7fELF\x02\x01\x01\x00",
        b"text with a \x00 in it",
        b"\xff\xfe\xfd latin-1 or garbage",
    ],
)
def test_refuses_binary_files_clearly(tree: Path, content: bytes) -> None:
    (tree / "blob.bin").write_bytes(content)
    with pytest.raises(FileRefused, match=r"binary|not UTF-8"):
        read_text_file(tree, "blob.bin", LIMIT)


def test_refuses_folders_and_missing_files(tree: Path) -> None:
    with pytest.raises(FileRefused, match="is a folder"):
        read_text_file(tree, "notes", LIMIT)
    with pytest.raises(FileRefused, match="is a folder"):
        read_text_file(tree, ".", LIMIT)
    with pytest.raises(FileRefused, match=r"no such file: 'nope\.txt'"):
        read_text_file(tree, "nope.txt", LIMIT)


def test_refuses_a_fifo_without_hanging(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    with pytest.raises(FileRefused, match="not a regular file"):
        read_text_file(tree, "pipe", LIMIT)


def test_missing_base_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="file folder does not exist"):
        resolve_inside(tmp_path / "absent", "x.txt")


def test_outside_paths_are_refused_alike_whether_or_not_they_exist(tree: Path) -> None:
    # Otherwise "no such file" versus "outside" would let a model probe the server's files.
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "../secret.txt", LIMIT)
    with pytest.raises(FileRefused, match="outside the file folder"):
        read_text_file(tree, "../no-such-secret.txt", LIMIT)


def test_error_messages_do_not_reveal_the_real_folder(tree: Path) -> None:
    with pytest.raises(FileRefused) as caught:
        read_text_file(tree, "../secret.txt", LIMIT)
    assert str(tree) not in str(caught.value)


def test_the_tool_reads_below_its_folder(tree: Path) -> None:
    read_file = make_read_file_tool(tree, LIMIT)
    assert read_file.name == "read_file"
    assert read_file("notes/todo.txt") == "buy milk\n"
    with pytest.raises(FileRefused):
        read_file("../secret.txt")
