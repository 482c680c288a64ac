"""sql_readonly's output: a compact text table, truncation marked, every value on one line."""

import datetime as dt
from decimal import Decimal

from agentkit.adapters.tools.sql_readonly.table import MAX_CELL_CHARS, QueryResult, format_table


def test_renders_a_header_a_rule_rows_and_a_count() -> None:
    result = QueryResult(columns=("name", "total"), rows=(("Ada", Decimal("120.50")), ("Grace", Decimal("7.00"))))
    assert format_table(result) == "name  | total\n------+-------\nAda   | 120.50\nGrace | 7.00\n(2 rows)"


def test_says_one_row_and_zero_rows() -> None:
    assert format_table(QueryResult(columns=("x",), rows=((1,),))).endswith("(1 row)")
    assert format_table(QueryResult(columns=("x",), rows=())) == "x\n-\n(0 rows)"


def test_marks_truncation_and_suggests_what_to_do() -> None:
    text = format_table(QueryResult(columns=("n",), rows=((1,), (2,)), truncated=True))
    assert text.endswith("(2 rows shown; the result has more and was cut at the row limit: aggregate or add LIMIT)")


def test_shows_values_of_every_common_type() -> None:
    row = (
        None,
        True,
        dt.date(2025, 1, 5),
        dt.datetime(2025, 1, 5, 12, 30, tzinfo=dt.UTC),
        b"\x01\xff",
        [1, 2],
        3.5,
    )
    line = format_table(QueryResult(columns=tuple("abcdefg"), rows=(row,))).splitlines()[2]
    assert line.split(" | ") == ["NULL", "true", "2025-01-05", "2025-01-05T12:30:00+00:00", "\\x01ff", "[1, 2]", "3.5"]


def test_keeps_each_row_on_one_line_and_long_values_short() -> None:
    text = format_table(QueryResult(columns=("note", "long"), rows=(("line1\nline2\tx", "y" * 1000),)))
    row = text.splitlines()[2]
    assert row.startswith("line1\\nline2\\tx | ")
    assert row.endswith("y" * (MAX_CELL_CHARS - 1) + "…")
