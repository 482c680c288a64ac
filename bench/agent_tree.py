"""Agents that call agents: what a tree of runs costs over the same work done in one run.

1. Fan-out: a parent calls 3 agents in one turn (parallel tool calls); each child's model takes
   0.1, 0.2 and 0.3 s. Reported: the tree's wall time (POST /v1/runs until the parent's answer)
   against the slowest child's own (its started_at to finished_at), median of the rounds. Aim: 1.2x.
2. Added cost of a child run: a parent that calls an agent whose model answers at once, against a
   parent that calls a tool returning the same answer (the same work inline), alternating, p50 and
   p90 of the request's latency. The difference is the child run's own cost: its row, claim, trace
   and end, the parent's pause, its answer and its resume from the stored steps. Aim: 2 ms at p50.

Both on PostgreSQL and Redis (DATABASE_URL / REDIS_URL, default the local ones) in a scratch
database, runs inline in this process (the API's own scheduler), through the HTTP app in process.

Run: `.venv/bin/python bench/agent_tree.py [--rounds N] [--samples N]`.
"""

import argparse
import asyncio
import logging
import os
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import structlog  # noqa: E402
from dishka.integrations.litestar import LitestarProvider  # noqa: E402
from tests.agent_tree_fixtures import GoalScriptedLLM, answer, calls  # noqa: E402
from tests.http_fixtures import ApiClient, Overrides  # noqa: E402

from agentkit.adapters.postgres import parse_database_url  # noqa: E402
from agentkit.application.tools import ToolRegistry, tool  # noqa: E402
from agentkit.entrypoints.wiring.container import make_container  # noqa: E402
from agentkit.entrypoints.wiring.serving import build_http_app  # noqa: E402
from agentkit.entrypoints.wiring.settings import load_settings  # noqa: E402
from agentkit.entrypoints.wiring.startup import started_state  # noqa: E402
from http_harness import scratch_state  # noqa: E402

KEY = "bench-tree-key"
AGENTS = """
[agents.boss]
description = "Delegates."
tools = ["work"]
agents = ["helper"]

[agents.helper]
description = "Does one piece of work."
tools = []
"""
DELAYS = {"part 1": 0.1, "part 2": 0.2, "part 3": 0.3}


@tool
async def work(task: str) -> str:
    """Do a piece of work inline.

    Args:
        task: What to do.
    """
    return f"did {task}"


def scripts(samples: int) -> dict[str, list[Any]]:
    """Every goal's script: the fan-out rounds, then the inline and child-run samples (each goal unique)."""
    found: dict[str, list[Any]] = {}
    fan_out = calls(*(("ask_helper", f"c{n}", {"task": part}) for n, part in enumerate(DELAYS, 1)))
    found["fan out"] = [fan_out, answer("all three done")]
    for part in DELAYS:
        found[part] = [answer(f"did {part}")]
    for n in range(samples):
        found[f"inline {n}"] = [calls(("work", "w1", {"task": f"piece {n}"})), answer("done")]
        found[f"child {n}"] = [calls(("ask_helper", "h1", {"task": f"piece {n}"})), answer("done")]
        found[f"piece {n}"] = [answer(f"did piece {n}")]
    return found


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def seconds(start: str, end: str) -> float:
    """The seconds between two of a run's times."""
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


CPU: list[float] = []  # this process's CPU seconds of each request `post` made, in order


async def post(api: ApiClient, goal: str) -> tuple[float, dict[str, Any]]:
    """Run `goal` with the boss agent and wait for its end; the request's seconds and the run.

    The CPU seconds this process spent meanwhile go to CPU: the machine's other load does not count there.
    """
    started, cpu = time.perf_counter(), time.process_time()
    response = await api.post("/v1/runs", json={"goal": goal, "agent": "boss"}, headers={"X-API-Key": KEY})
    took = time.perf_counter() - started
    CPU.append(time.process_time() - cpu)
    run: dict[str, Any] = response.json()
    assert response.status_code == 201, response.text
    assert run["status"] == "succeeded", run
    return took, run


async def main(rounds: int, samples: int) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    server = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    async with scratch_state(server, redis_url) as scratch:
        (scratch.work / "agents.toml").write_text(AGENTS)
        env = {
            "DATABASE_URL": scratch.dsn,
            "REDIS_URL": redis_url,
            "REDIS_KEY_PREFIX": scratch.prefix,
            "STATE_BACKEND": "external",
            "API_KEYS": KEY,
            "LOG_LEVEL": "ERROR",
            "AGENTS_FILE": str(scratch.work / "agents.toml"),
            "RESPONSE_TIMEOUT_S": "60",
            "RATE_LIMIT_PER_MIN": "100000",
        }
        settings = load_settings(env)
        llm = GoalScriptedLLM(scripts(samples), delay_s=DELAYS)
        registry = ToolRegistry([work], default_timeout_s=settings.tools.tool_timeout_s)
        async with started_state(settings) as endpoints:
            container = make_container(settings, LitestarProvider(), Overrides(llm, registry), endpoints=endpoints)
            async with ApiClient(await build_http_app(container)) as api:
                await fan_out(api, rounds)
                await added_cost(api, samples)


async def fan_out(api: ApiClient, rounds: int) -> None:
    """A parent calling three children at once: the tree's wall time against its slowest child's."""
    ratios, walls, slowest = [], [], []
    for _ in range(2):  # warm-up: the pools' first connections, the statement caches
        await post(api, "fan out")
    for _ in range(rounds):
        wall, run = await post(api, "fan out")
        tree = (await api.get(f"/v1/runs/{run['id']}", headers={"X-API-Key": KEY})).json()
        children = [(await api.get(c["link"], headers={"X-API-Key": KEY})).json() for c in tree["children"]]
        longest = max(seconds(c["started_at"], c["finished_at"]) for c in children)
        walls.append(wall)
        slowest.append(longest)
        ratios.append(wall / longest)
    print(
        f"fan-out, 3 children at once ({rounds} rounds): tree {statistics.median(walls) * 1000:.1f} ms, "
        f"slowest child {statistics.median(slowest) * 1000:.1f} ms, ratio {statistics.median(ratios):.3f}x "
        f"(worst {max(ratios):.3f}x)"
    )


async def added_cost(api: ApiClient, samples: int) -> None:
    """The same work inline and as a child run, alternating."""
    inline, child, inline_cpu, child_cpu = [], [], [], []
    for n in range(samples):
        inline.append((await post(api, f"inline {n}"))[0])
        inline_cpu.append(CPU[-1])
        child.append((await post(api, f"child {n}"))[0])
        child_cpu.append(CPU[-1])
    warm = samples // 10  # the first requests warm the pools and the statement caches
    inline, child, inline_cpu, child_cpu = inline[warm:], child[warm:], inline_cpu[warm:], child_cpu[warm:]
    for name, values, cpu in (("inline tool", inline, inline_cpu), ("child run", child, child_cpu)):
        print(
            f"{name:12} p50 {percentile(values, 50) * 1000:6.2f} ms  p90 {percentile(values, 90) * 1000:6.2f} ms"
            f"  CPU p50 {percentile(cpu, 50) * 1000:6.2f} ms"
        )
    print(
        f"added cost of a child run: p50 {(percentile(child, 50) - percentile(inline, 50)) * 1000:.2f} ms, "
        f"p90 {(percentile(child, 90) - percentile(inline, 90)) * 1000:.2f} ms, this process's CPU p50 "
        f"{(percentile(child_cpu, 50) - percentile(inline_cpu, 50)) * 1000:.2f} ms ({len(inline)} samples each)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}; PostgreSQL and Redis, inline runs, HTTP app in process")
    asyncio.run(main(args.rounds, args.samples))
