"""The baseline for `bench/http_throughput.py`: a bare Litestar endpoint doing AgentKit's database writes.

POST /runs `{"goal": str}` writes what AgentKit writes for a run of two tool steps (three LLM
calls, two tool calls), with raw asyncpg on a pool and one autocommitted statement each:

1. INSERT the pending run (every column, as `SqlaRunRepository.add`);
2. UPDATE it to running (started_at, heartbeat_at, expires_at, attempt), as `save` on start;
3. INSERT five steps (llm, tool, llm, tool, llm) with the same JSON as `SqlaTraceSink.record`;
4. UPDATE it to succeeded (answer, tokens, finished_at), as the final `save`;

and answers 201 with the run as JSON. POST /runs/with-reads also makes the reads AgentKit makes:
the run is read back before each LLM call (the cancel check) and once at the end (the response).

No API key, no rate limit (AgentKit's costs a Redis round trip), no dependency injection, no
domain objects: the least a server can do to store the same rows.

Run: `.venv/bin/python bench/bare_endpoint.py --port P` with BARE_DATABASE_URL (a postgresql://
DSN) and optionally BARE_POOL_SIZE (default 20, AgentKit's default 10 + 10 overflow).
"""

import argparse
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import msgspec
import uvicorn
from litestar import Litestar, Response, get, post

OWNER = "bare"
LEASE = timedelta(seconds=30)
INSERT_RUN = """
INSERT INTO runs (id, owner, session_id, goal, status, final_answer, output, output_schema, failure_reason,
                  max_steps, total_input_tokens, total_output_tokens, created_at, started_at, finished_at,
                  expires_at, heartbeat_at, cancel_requested, idempotency_key, request_fingerprint, attempt)
VALUES ($1, $2, NULL, $3, 'pending', NULL, NULL, NULL, NULL, 10, 0, 0, $4, NULL, NULL, $5, NULL, false, NULL, NULL, 0)
"""
START_RUN = """
UPDATE runs SET status = 'running', started_at = $2, heartbeat_at = $2, expires_at = $3, attempt = 1
WHERE id = $1
"""
INSERT_STEP = """
INSERT INTO steps (run_id, step_no, kind, tool_name, call_id, args, result, error,
                   latency_ms, input_tokens, output_tokens, created_at)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, NULL, $8, $9, $10, $11)
"""
FINISH_RUN = """
UPDATE runs SET status = 'succeeded', final_answer = $2, total_input_tokens = $3, total_output_tokens = $4,
                finished_at = $5, expires_at = NULL
WHERE id = $1
"""
READ_RUN = "SELECT * FROM runs WHERE id = $1"
ANSWER = "done"
_json = msgspec.json.Encoder()


class RunCreate(msgspec.Struct, forbid_unknown_fields=True):
    """The request body."""

    goal: str


class RunOut(msgspec.Struct, kw_only=True):
    """The response: the finished run."""

    id: str
    status: str
    goal: str
    answer: str
    input_tokens: int
    output_tokens: int
    created_at: datetime
    started_at: datetime
    finished_at: datetime


def _llm_result(turn: int) -> bytes:
    if turn < 3:
        call = {"id": f"call-{turn}-1", "name": "noop", "arguments": {"i": turn}}
        return _json.encode({"text": f"step {turn}", "tool_calls": [call], "finish_reason": "tool_calls"})
    return _json.encode({"text": ANSWER, "finish_reason": "stop"})


# The step rows are the same for every run but for the run id and times: (kind, tool, call id, args, result, tokens).
STEPS: list[tuple[str, str | None, str | None, str | None, str, int, int]] = []
for _turn in (1, 2, 3):
    STEPS.append(("llm", None, None, None, _llm_result(_turn).decode(), 10, 5))
    if _turn < 3:
        result = {"ok": True, "output": "ok", "error": None, "truncated": False, "latency_ms": 0.01, "value": "ok"}
        args = _json.encode({"i": _turn}).decode()
        STEPS.append(("tool", "noop", f"call-{_turn}-1", args, _json.encode(result).decode(), 0, 0))


async def _run(pool: asyncpg.Pool, goal: str, *, reads: bool) -> RunOut:
    run_id = uuid.uuid4()
    created = datetime.now(UTC)
    await pool.execute(INSERT_RUN, run_id, OWNER, goal, created, created + LEASE)
    started = datetime.now(UTC)
    await pool.execute(START_RUN, run_id, started, started + LEASE)
    tokens_in = tokens_out = 0
    for step_no, (kind, tool_name, call_id, step_args, step_result, t_in, t_out) in enumerate(STEPS, start=1):
        if reads and kind == "llm":
            await pool.fetchrow(READ_RUN, run_id)  # AgentKit's cancel check before each LLM call
        tokens_in, tokens_out = tokens_in + t_in, tokens_out + t_out
        await pool.execute(
            INSERT_STEP,
            run_id,
            step_no,
            kind,
            tool_name,
            call_id,
            step_args,
            step_result,
            0.01,
            t_in,
            t_out,
            datetime.now(UTC),
        )
    finished = datetime.now(UTC)
    await pool.execute(FINISH_RUN, run_id, ANSWER, tokens_in, tokens_out, finished)
    if reads:
        row = await pool.fetchrow(READ_RUN, run_id)
        finished = row["finished_at"]
    return RunOut(
        id=str(run_id),
        status="succeeded",
        goal=goal,
        answer=ANSWER,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        created_at=created,
        started_at=started,
        finished_at=finished,
    )


def create_app(dsn: str, pool_size: int) -> Litestar:
    """The bare app on a pool of `pool_size` connections to `dsn`."""
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        state["pool"] = await asyncpg.create_pool(dsn, min_size=min(10, pool_size), max_size=pool_size)
        try:
            yield
        finally:
            await state["pool"].close()

    @post("/runs", status_code=201)
    async def create_run(data: RunCreate) -> RunOut:
        return await _run(state["pool"], data.goal, reads=False)

    @post("/runs/with-reads", status_code=201)
    async def create_run_with_reads(data: RunCreate) -> RunOut:
        return await _run(state["pool"], data.goal, reads=True)

    @get("/health")
    async def health() -> Response[dict[str, str]]:
        await state["pool"].fetchval("SELECT 1")
        return Response({"status": "ok"})

    return Litestar([create_run, create_run_with_reads, health], lifespan=[lifespan], debug=False)


def main() -> None:
    """Serve the bare app under uvicorn, configured as `agentkit serve` configures it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = create_app(os.environ["BARE_DATABASE_URL"], int(os.environ.get("BARE_POOL_SIZE", "20")))
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
