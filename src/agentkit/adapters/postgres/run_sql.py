"""The statements on a run's path (add, get, claim, save), sent through asyncpg directly, and their arguments.

Plain SQL with numbered parameters, written out from the `runs` table so that a column added there
is written and read here too. asyncpg prepares each statement once per connection.
"""

from typing import Any, Final

from sqlalchemy.dialects.postgresql import JSONB

from agentkit.adapters.postgres.engine import to_json
from agentkit.adapters.postgres.mapping import run_to_row
from agentkit.adapters.postgres.tables import runs
from agentkit.domain.run import Run, RunStatus

RUN_COLUMNS: Final = tuple(column.name for column in runs.c)
_JSON_COLUMNS: Final = frozenset(column.name for column in runs.c if isinstance(column.type, JSONB))
_COLUMN_LIST: Final = ", ".join(RUN_COLUMNS)
_VALUES: Final = ", ".join(f"${n}" for n in range(1, len(RUN_COLUMNS) + 1))
# runs a write may still change
_OPEN: Final = ", ".join(
    f"'{status.value}'"
    for status in (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.REQUIRES_ACTION, RunStatus.WAITING)
)
_REPLACED: Final = ", ".join(
    f"{name} = excluded.{name}" for name in RUN_COLUMNS if name not in ("id", "cancel_requested")
)

INSERT_RUN: Final = f"INSERT INTO runs ({_COLUMN_LIST}) VALUES ({_VALUES})"  # noqa: S608 - names from the table

GET_RUN: Final = f"SELECT {_COLUMN_LIST} FROM runs WHERE id = $1"  # noqa: S608
GET_RUN_BY_KEY: Final = f"SELECT {_COLUMN_LIST} FROM runs WHERE owner = $1 AND idempotency_key = $2"  # noqa: S608

# A cancel that arrived while the executor worked survives the executor's next save. Fencing: a
# write from an older attempt changes nothing, nor does one that would move a run out of the
# terminal status something else (the sweeper) gave it; RETURNING then returns no row.
SAVE_RUN: Final = f"""
INSERT INTO runs ({_COLUMN_LIST}) VALUES ({_VALUES})
ON CONFLICT (id) DO UPDATE SET {_REPLACED}, cancel_requested = runs.cancel_requested OR excluded.cancel_requested
WHERE runs.attempt <= excluded.attempt AND (runs.status IN ({_OPEN}) OR runs.status = excluded.status)
RETURNING runs.id
"""  # noqa: S608
# what refused a fenced save, for its message
RUN_FENCE: Final = "SELECT attempt, status FROM runs WHERE id = $1"

# $1 id, $2 the attempt the claimer read, $3 now, $4 the lease's end. The domain's `claimable`
# (pending, or running with its lease lapsed) and `claim` in one statement: of two executors claiming
# the same run, the second finds the attempt moved on.
CLAIM_RUN: Final = f"""
UPDATE runs SET status = '{RunStatus.RUNNING.value}', attempt = attempt + 1, started_at = coalesce(started_at, $3),
    heartbeat_at = $3, expires_at = $4
WHERE id = $1 AND attempt = $2 AND (
    status = '{RunStatus.PENDING.value}'
    OR (status = '{RunStatus.RUNNING.value}' AND (expires_at IS NULL OR expires_at <= $3))
)
RETURNING {_COLUMN_LIST}
"""  # noqa: S608


def run_arguments(run: Run) -> list[Any]:
    """The run's column values in RUN_COLUMNS' order, as INSERT_RUN and SAVE_RUN take them (JSONB as its text)."""
    row = run_to_row(run)
    return [
        to_json(value) if name in _JSON_COLUMNS and value is not None else value
        for name, value in ((name, row[name]) for name in RUN_COLUMNS)
    ]


# $1 id, $2 the attempt, $3 the action it must still have (JSONB), then the new status, action, expiry
# and children's usage. A compare-and-set on the paused run's action: of two answers given at once
# (two children ending together), the second finds the action changed.
SAVE_ANSWER: Final = f"""
UPDATE runs SET status = $4, action = $5, expires_at = $6,
    children_input_tokens = $7, children_output_tokens = $8, children_cost_usd = $9, children_turns = $10
WHERE id = $1 AND attempt = $2 AND status IN ('{RunStatus.REQUIRES_ACTION.value}', '{RunStatus.WAITING.value}')
    AND action = $3
RETURNING id
"""  # noqa: S608


def answer_arguments(run: Run, expected: Any) -> list[Any]:
    """SAVE_ANSWER's arguments for this version of a paused run, which must still hold `expected` as its action."""
    return [
        run.id,
        run.attempt,
        to_json(expected),
        run.status.value,
        None if run.action is None else to_json(run.action),
        run.expires_at,
        run.children_input_tokens,
        run.children_output_tokens,
        run.children_cost_usd,
        run.children_turns,
    ]
