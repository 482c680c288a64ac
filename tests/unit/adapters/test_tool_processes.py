"""Sync tools in worker processes: killed at their timeout, held to their limits, and nothing left behind."""

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.adapters.tools.processes import ProcessPoolConfig, ProcessToolSandbox
from agentkit.application.errors import ToolRegistrationError
from agentkit.application.tools import Tool, ToolContext, ToolRegistry, tool
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import ToolStep
from tests import process_tools
from tests.unit.application.harness import OWNER, Harness, answer, call, calls
from tests.unit.application.store_doubles import eventually

CONTEXT = ToolContext(run_id=RunId("run-1"), owner=OwnerId("owner-1"))


def gone(pid: int) -> bool:
    """Whether the process has ended and been reaped (no zombie left either)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
async def sandbox() -> AsyncIterator[ProcessToolSandbox]:
    """A pool of two workers with tight limits; every worker must be gone once it is closed."""
    pool = ProcessToolSandbox(ProcessPoolConfig(size=2, memory_mb=128, cpu_s=1))
    started: set[int] = set()
    try:
        yield pool
        started.update(pool.processes)
    finally:
        await pool.aclose()
    assert pool.processes == []
    assert all(gone(pid) for pid in started)


def registry(sandbox: ProcessToolSandbox, *tools: Tool[..., Any], timeout_s: float = 30.0) -> ToolRegistry:
    return ToolRegistry(tools, default_timeout_s=timeout_s, sandbox=sandbox)


async def run_tool(tools: ToolRegistry, name: str, **arguments: Any) -> Any:
    return await tools.execute(ToolCall(id=ToolCallId("c1"), name=name, arguments=arguments), CONTEXT)


async def test_a_call_runs_in_a_worker_process_and_returns_its_value(sandbox: ProcessToolSandbox) -> None:
    tools = registry(sandbox, process_tools.whoami, process_tools.chatty)

    first = await run_tool(tools, "whoami")
    second = await run_tool(tools, "whoami")
    printed = await run_tool(tools, "chatty")

    assert first.ok
    assert first.value != os.getpid()
    assert first.value in sandbox.processes
    assert second.value in sandbox.processes  # the worker is kept for the next call
    assert (printed.ok, printed.output) == (True, "quiet")  # what a tool prints never mixes with its reply


async def test_a_hung_sync_tool_is_killed_at_its_timeout_and_its_process_replaced(
    sandbox: ProcessToolSandbox, tmp_path: Path
) -> None:
    hung = Tool(process_tools.spin.fn, name="spin", isolation="process", timeout_s=0.5)
    tools = registry(sandbox, hung, process_tools.whoami)
    pid_file = tmp_path / "pid"

    result = await run_tool(tools, "spin", pid_file=str(pid_file))

    assert not result.ok
    assert result.error == "tool 'spin' timed out after 0.5 s; its process was stopped"
    pid = int(pid_file.read_text())
    await eventually(lambda: gone(pid))  # killed and reaped, not left spinning
    after = await run_tool(tools, "whoami")
    assert after.ok
    assert after.value != pid


async def test_a_memory_hog_is_stopped_by_its_limit(sandbox: ProcessToolSandbox) -> None:
    tools = registry(sandbox, process_tools.hog, process_tools.whoami)
    before = await run_tool(tools, "whoami")

    greedy = await run_tool(tools, "hog", megabytes=512)
    modest = await run_tool(tools, "hog", megabytes=8)

    assert not greedy.ok
    assert greedy.error == "tool 'hog' was stopped: it went over its memory limit (128 MB); its process was replaced"
    assert (modest.ok, modest.value) == (True, 8 * 1024 * 1024)
    assert before.ok


async def test_a_tool_that_spins_past_its_cpu_allowance_is_stopped_by_the_kernel(
    sandbox: ProcessToolSandbox, tmp_path: Path
) -> None:
    # a time limit far off: the CPU limit (1 s of CPU, whole seconds) stops it first
    tools = registry(sandbox, process_tools.spin, timeout_s=120)

    result = await run_tool(tools, "spin", pid_file=str(tmp_path / "pid"))

    assert not result.ok
    assert result.error == "tool 'spin' was stopped: it went over its CPU time limit (1 s); its process was stopped"


async def test_a_worker_gets_no_secret_of_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("DATABASE_URL", "postgresql://agentkit:secret@db/agentkit")
    monkeypatch.setenv("WEATHER_API_URL", "https://weather.example")
    pool = ProcessToolSandbox(ProcessPoolConfig(size=1, env=("WEATHER_API_URL",)))
    try:
        result = await run_tool(registry(pool, process_tools.environment), "environment")
    finally:
        await pool.aclose()

    assert result.ok
    assert "OPENAI_API_KEY" not in result.value
    assert "DATABASE_URL" not in result.value
    assert "WEATHER_API_URL" in result.value  # named in TOOL_PROCESS_ENV
    assert "PATH" in result.value


async def test_a_tools_errors_reach_the_model_as_they_would_from_a_thread(sandbox: ProcessToolSandbox) -> None:
    tools = registry(sandbox, process_tools.refuse, process_tools.crash)

    refused = await run_tool(tools, "refuse", why="the account is closed")
    crashed = await run_tool(tools, "crash")

    assert refused.error == "the account is closed"
    assert crashed.error == "tool 'crash' failed: ValueError: bad input"


async def test_killed_calls_leave_no_process_behind(sandbox: ProcessToolSandbox, tmp_path: Path) -> None:
    hung = Tool(process_tools.spin.fn, name="spin", isolation="process", timeout_s=0.05)
    tools = registry(sandbox, hung)
    seen: set[int] = set()

    for round_no in range(20):  # bench/parallel_tools.py makes 1,000 and counts the threads too
        pid_file = tmp_path / f"pid-{round_no}"
        result = await run_tool(tools, "spin", pid_file=str(pid_file))
        assert result.error is not None
        assert "timed out" in result.error
        if pid_file.exists():
            seen.add(int(pid_file.read_text()))

    await sandbox.warm()
    assert len(sandbox.processes) <= 2
    await eventually(lambda: all(gone(pid) for pid in seen))


def test_a_tool_a_worker_cannot_import_by_name_is_refused_where_it_is_declared() -> None:
    def local() -> str:
        return "defined inside a test"

    with pytest.raises(ToolRegistrationError, match="define it at the top level of a module"):
        tool(isolation="process")(local)
    with pytest.raises(ToolRegistrationError, match="TOOL_ISOLATION=process"):
        ToolRegistry([tool(local)], sync_isolation="process")

    @tool
    async def waits() -> str:
        return "async tools wait without blocking"

    accepted = ToolRegistry([waits, process_tools.plain], sync_isolation="process")
    assert (accepted.runs_in_process("plain"), accepted.runs_in_process("waits")) == (True, False)


async def test_a_call_in_a_process_without_a_pool_is_a_tool_error() -> None:
    result = await run_tool(ToolRegistry([process_tools.whoami]), "whoami")

    assert result.error == "tool 'whoami' runs in a worker process, and this runtime has no process pool"


@pytest.mark.parametrize("count", [1, 2], ids=["one call", "a batch"])
async def test_a_cancel_kills_the_processes_of_the_calls_it_stops(tmp_path: Path, count: int) -> None:
    pids = [tmp_path / f"pid-{n}" for n in range(count)]
    pool = ProcessToolSandbox(ProcessPoolConfig(size=2, memory_mb=128))  # no CPU limit: only the cancel stops them
    turn = calls(*(call("spin", f"c{n}", pid_file=str(path)) for n, path in enumerate(pids)))
    h = Harness([turn, answer("never")], [process_tools.spin], tool_timeout_s=120, sandbox=pool)
    try:
        task = asyncio.create_task(h.run("spin"))
        await eventually(lambda: all(path.exists() and path.read_text() for path in pids))

        await h.cancel.execute(RunId("run-1"), OWNER)
        run = await task
    finally:
        await pool.aclose()

    assert run.status is RunStatus.CANCELLED
    killed = [int(path.read_text()) for path in pids]
    await eventually(lambda: all(gone(pid) for pid in killed))
    steps = [step for step in await h.steps(run) if isinstance(step, ToolStep)]
    assert sorted(step.call_id for step in steps) == [f"c{n}" for n in range(count)]
    assert {step.result.error for step in steps} == {"stopped: the run was cancelled while this call ran"}
