"""The trace writer's statement: a batch of steps, with the messages and tool sets they sent first, in one.

One INSERT per table, each from `unnest` of one array per column, joined in a WITH: one round trip
and one prepared statement whatever the batch holds (an empty array inserts nothing), and one
atomic write, so a step read back always finds the messages it sent. Every table's key makes a row
written again (a batch retried after its answer was lost) add nothing.
"""

from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import JSONB

from agentkit.adapters.postgres.engine import to_json
from agentkit.adapters.postgres.mapping import message_rows, step_to_row, tool_set_rows
from agentkit.adapters.postgres.tables import run_messages, run_tool_sets, steps
from agentkit.domain.steps import Step

_DIALECT: Final = postgresql.dialect()  # type: ignore[no-untyped-call]  # for the columns' type names

StepValues = tuple[Any, ...]
"""A `steps` row's values in the table's column order (JSONB as its text)."""


def _insert(table: Table, conflict: str, first: int) -> str:
    # $first.. are the arrays, one per column, typed as the columns are
    arrays = ", ".join(f"${first + n}::{column.type.compile(dialect=_DIALECT)}[]" for n, column in enumerate(table.c))
    names = ", ".join(table.c.keys())
    # names from the tables, not from data
    return f"INSERT INTO {table.name} ({names}) SELECT * FROM unnest({arrays}) ON CONFLICT ({conflict}) DO NOTHING"  # noqa: S608


def _json_columns(table: Table) -> frozenset[str]:
    return frozenset(column.name for column in table.c if isinstance(column.type, JSONB))


_MESSAGE_COLUMNS: Final = tuple(run_messages.c.keys())
_TOOL_SET_COLUMNS: Final = tuple(run_tool_sets.c.keys())
_STEP_COLUMNS: Final = tuple(steps.c.keys())
_STEP_JSON: Final = _json_columns(steps)
_MESSAGE_JSON: Final = _json_columns(run_messages)
_TOOL_SET_JSON: Final = _json_columns(run_tool_sets)
_TOOL_SETS_FROM: Final = 1 + len(_MESSAGE_COLUMNS)
_STEPS_FROM: Final = _TOOL_SETS_FROM + len(_TOOL_SET_COLUMNS)

WRITE_BATCH: Final = (
    f"WITH messages AS ({_insert(run_messages, 'run_id, seq', 1)}),"
    f" tool_sets AS ({_insert(run_tool_sets, 'run_id, digest', _TOOL_SETS_FROM)})"
    f" {_insert(steps, 'id', _STEPS_FROM)}"
)


def step_values(step: Step, row_id: str) -> StepValues:
    """The step's `steps` row under `row_id` (given once, when it is queued: a retried write then adds nothing)."""
    row = step_to_row(step)
    row["id"] = row_id
    return _values(row, _STEP_COLUMNS, _STEP_JSON)


def batch_arguments(batch: Sequence[tuple[Step, StepValues]]) -> list[list[Any]]:
    """WRITE_BATCH's arguments: the arrays of the messages and tool sets the steps sent first, then of the steps."""
    messages = [row for step, _ in batch for row in message_rows(step)]
    tool_sets = [row for step, _ in batch for row in tool_set_rows(step)]
    return [
        *_arrays([_values(row, _MESSAGE_COLUMNS, _MESSAGE_JSON) for row in messages], len(_MESSAGE_COLUMNS)),
        *_arrays([_values(row, _TOOL_SET_COLUMNS, _TOOL_SET_JSON) for row in tool_sets], len(_TOOL_SET_COLUMNS)),
        *_arrays([values for _, values in batch], len(_STEP_COLUMNS)),
    ]


def _values(row: dict[str, Any], names: tuple[str, ...], json: frozenset[str]) -> tuple[Any, ...]:
    return tuple(_encoded(row, name, json) for name in names)


def _arrays(rows: Sequence[tuple[Any, ...]], width: int) -> list[list[Any]]:
    # rows to columns: the array of each column's values
    return [[row[n] for row in rows] for n in range(width)]


def _encoded(row: dict[str, Any], name: str, json: frozenset[str]) -> Any:
    value = row[name]
    return to_json(value) if name in json and value is not None else value
