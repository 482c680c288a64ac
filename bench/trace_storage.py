"""Stored bytes per step of a run's trace, prompts included: a 1,000-turn run against a 10-turn run.

Each run goes through the real AgentLoop with the Postgres run repository and trace sink: every
turn is one LLM call that asks for one tool call (a 300-character output), then that tool call;
the last turn answers. Each LLM call sends the whole conversation so far and the tool schemas, and
the trace keeps all of it: the steps, each message once (`run_messages`) and each tool set once
(`run_tool_sets`), the steps referring to the prefix they sent. Bytes are PostgreSQL's own
(`pg_column_size` of every row of the run in the three tables; indexes and page overhead apart).

For comparison it also reports what storing each call's prompt whole would take (the JSON of the
messages every call sent), which grows with the square of the run's length.

The server is DATABASE_URL's when set, else an embedded PostgreSQL in a temporary folder; the rows
go into a scratch database that is dropped at the end.

Run: `.venv/bin/python bench/trace_storage.py`.
"""

import asyncio
import logging
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import msgspec
import structlog
from sqlalchemy import text
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.embedded import EmbeddedPostgres
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory import InMemorySessionStore
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.postgres import (
    AlembicSchemaMigrator,
    SqlaRunRepository,
    SqlaTraceSink,
    create_database,
    create_engine,
    drop_database,
    parse_database_url,
)
from agentkit.adapters.system import SystemClock, UuidIdGenerator
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import ToolRegistry, tool
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from agentkit.domain.run import RunStatus

OUTPUT = "x" * 300


@tool
async def fetch_page(page: int) -> str:
    """Fetch one page of results.

    Args:
        page: Which page.
    """
    return OUTPUT


def script(turns: int) -> list[LLMResponse]:
    usage = Usage(input_tokens=500, output_tokens=40)
    calls = [
        LLMResponse(
            text="Fetching the next page.",
            tool_calls=(ToolCall(id=ToolCallId(f"call_{i:05d}"), name="fetch_page", arguments={"page": i}),),
            usage=usage,
        )
        for i in range(turns - 1)
    ]
    return [*calls, LLMResponse(text="All pages fetched.", usage=usage)]


async def stored_bytes(engine: AsyncEngine, run_id: RunId) -> dict[str, int]:
    sizes: dict[str, int] = {}
    async with engine.connect() as conn:
        for table in ("steps", "run_messages", "run_tool_sets"):
            query = text(f"SELECT coalesce(sum(pg_column_size(t.*)), 0), count(*) FROM {table} t WHERE run_id = :id")  # noqa: S608 - the table names are ours
            total, rows = (await conn.execute(query, {"id": run_id})).one()
            sizes[table] = int(total)
            sizes[f"{table}_rows"] = int(rows)
    return sizes


async def one_run(engine: AsyncEngine, turns: int) -> dict[str, float]:
    clock = SystemClock()
    runs = SqlaRunRepository(engine)
    sink = SqlaTraceSink(engine)
    llm = ScriptedLLMClient(script(turns))
    loop = AgentLoop(
        memory_loop_deps(
            llm,
            ToolRegistry([fetch_page]),
            runs=runs,
            trace=sink,
            sessions=InMemorySessionStore(clock),
            clock=clock,
            config=AgentConfig(run_timeout_s=600),
            policy=PromptPolicy(secrets=("sk-a-provider-key-000",)),
        )
    )
    create = CreateRun(runs=runs, clock=clock, ids=UuidIdGenerator(), max_steps=turns, max_goal_chars=1000)
    run = await RunAgent(create=create, loop=loop).execute(
        CreateRunInput(owner=OwnerId("bench"), goal="Fetch every page of the report and summarise it.")
    )
    await sink.aclose()
    assert run.status is RunStatus.SUCCEEDED, run.failure_reason
    sizes = await stored_bytes(engine, run.id)
    steps = sizes["steps_rows"]
    whole = sum(len(msgspec.json.encode(messages)) for messages, _ in llm.requests)
    total = sizes["steps"] + sizes["run_messages"] + sizes["run_tool_sets"]
    return {
        "turns": turns,
        "steps": steps,
        "messages": sizes["run_messages_rows"],
        "tool_sets": sizes["run_tool_sets_rows"],
        "total": total,
        "per_step": total / steps,
        "whole_per_step": whole / steps,
    }


async def main_async(server: URL) -> list[dict[str, float]]:
    name = f"agentkit_bench_{uuid.uuid4().hex[:8]}"
    url = await create_database(server, name)
    try:
        engine = create_engine(url, pool_size=5, max_overflow=0, statement_timeout_s=60)
        await AlembicSchemaMigrator(engine).upgrade()
        try:
            return [await one_run(engine, 10), await one_run(engine, 1000)]
        finally:
            await engine.dispose()
    finally:
        await drop_database(server, name)


def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    embedded: EmbeddedPostgres | None = None
    folder = Path(tempfile.mkdtemp(prefix="agentkit-bench-"))
    try:
        if os.environ.get("DATABASE_URL"):
            server, where = parse_database_url(os.environ["DATABASE_URL"]), "DATABASE_URL"
        else:
            embedded = EmbeddedPostgres(folder / "postgres")
            server, where = embedded.start(), "embedded PostgreSQL"
        short, long = asyncio.run(main_async(server))
    finally:
        if embedded is not None:
            embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"server: {where}")
    print(
        "| run | trace steps | messages stored | tool sets | stored bytes | bytes per step | prompts whole, per step |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for figures in (short, long):
        print(
            f"| {figures['turns']:,.0f} turns | {figures['steps']:,.0f} | {figures['messages']:,.0f} "
            f"| {figures['tool_sets']:.0f} | {figures['total']:,.0f} | {figures['per_step']:,.0f} "
            f"| {figures['whole_per_step']:,.0f} |"
        )
    print(f"bytes per step, 1,000 turns against 10: {long['per_step'] / short['per_step']:.2f}x (aim: at most 1.2x)")


if __name__ == "__main__":
    main()
