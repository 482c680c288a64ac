"""Query results as a compact text table a model reads easily, with truncation marked."""

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Final

import msgspec

MAX_CELL_CHARS: Final = 200


class QueryResult(msgspec.Struct, frozen=True, kw_only=True):
    """Rows of one query.

    Attributes:
        columns: Column names in order.
        rows: At most the row limit of rows, each a tuple of values in column order.
        truncated: Whether the query had more rows than were fetched.
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False


def format_table(result: QueryResult) -> str:
    """Render a result as `a | b` lines under a header and a rule, ending with a row count.

    Example:
        ```
        name | total
        -----+-------
        Ada  | 120.50
        (1 row)
        ```
    """
    header = list(result.columns)
    body = [[_cell(value) for value in row] for row in result.rows]
    widths = [max([len(name), *(len(line[i]) for line in body)]) for i, name in enumerate(header)]
    lines = [_line(header, widths), "-+-".join("-" * width for width in widths)]
    lines.extend(_line(line, widths) for line in body)
    count = len(result.rows)
    if result.truncated:
        lines.append(f"({count} rows shown; the result has more and was cut at the row limit: aggregate or add LIMIT)")
    else:
        lines.append(f"({count} row{'' if count == 1 else 's'})")
    return "\n".join(lines)


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def _cell(value: Any) -> str:
    if value is None:
        text = "NULL"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, Decimal | int | float | str):
        text = str(value)
    elif isinstance(value, dt.datetime | dt.date | dt.time):
        text = value.isoformat()
    elif isinstance(value, bytes | bytearray | memoryview):
        text = "\\x" + bytes(value).hex()
    else:
        text = str(value)
    # One row per line: newlines and tabs inside a value are shown escaped.
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if len(text) > MAX_CELL_CHARS:
        return text[: MAX_CELL_CHARS - 1] + "…"
    return text
