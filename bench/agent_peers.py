"""AgentKit's `Agent` against Pydantic AI and LangGraph: time per step of the same scripted runs.

Each run: k turns in which a fake model asks for one call of an async no-op tool, then a turn in
which it answers. A step is one turn (one LLM call and, but for the last, one tool call), so
us/step = time per run / (k + 1). Each framework keeps one agent for every run at a given k.
Rounds interleave the frameworks, the order rotating each round, and each framework's ratio to
AgentKit is taken per round; the median of those ratios is the figure to quote, since these
machines are noisy. The peers are optional (`make bench-peers` installs them); without them
AgentKit is measured alone.

Run: `make bench-peers` or `.venv/bin/python bench/agent_peers.py [--quick] [--rounds N]`.
"""

import argparse
import asyncio
import gc
import importlib.metadata
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_harness import agentkit_agent, agentkit_run

RunOnce = Callable[[], Awaitable[None]]
Build = Callable[[int], RunOnce]
AIM = 100.0  # issue 20: AgentKit at least 100 times faster per step than each peer


def build_agentkit(tool_turns: int) -> RunOnce:
    """One `Agent` and a function making one checked run with it."""
    agent = agentkit_agent(tool_turns)
    return lambda: agentkit_run(agent, tool_turns)


def frameworks() -> list[tuple[str, str, Build]]:
    """(name, package, build) for AgentKit and each peer that is installed; says in one line which are not."""
    found: list[tuple[str, str, Build]] = [("AgentKit", "agentkit", build_agentkit)]
    missing = []
    # imported here, not at the top: each peer is optional (the bench dependency group installs them)
    try:
        import peer_pydantic_ai

        found.append((peer_pydantic_ai.NAME, "pydantic-ai-slim", peer_pydantic_ai.build))
    except ImportError as exc:
        missing.append(f"Pydantic AI (no module {exc.name})")
    try:
        import peer_langgraph

        found.append((peer_langgraph.NAME, "langgraph", peer_langgraph.build))
    except ImportError as exc:
        missing.append(f"LangGraph (no module {exc.name})")
    if missing:
        print(f"Not installed: {', '.join(missing)}; AgentKit alone (`make bench-peers` installs the peers).")
    return found


@dataclass
class Contender:
    """One framework at one k: its run function, runs a round, and each round's us/step by wall and CPU clock."""

    name: str
    run: RunOnce
    runs: int = 1
    wall_us: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)


async def seconds_per_run(run: RunOnce, runs: int) -> tuple[float, float]:
    """Mean wall and CPU time of `runs` runs one after another, after a collection so no garbage is inherited.

    CPU time is this process's: on a shared machine it leaves out the time other processes had
    the core, which wall time counts.
    """
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        await run()
        # Let the event loop turn once, as a caller's loop does between runs: AgentKit's in-memory
        # runs with a no-op tool never suspend, so without this the loop would not turn in a whole
        # round and its heap would keep every cancelled timeout timer (11 a run at k=10).
        await asyncio.sleep(0)
    return (time.perf_counter() - wall) / runs, (time.process_time() - cpu) / runs


async def calibrate(contender: Contender, warm_runs: int, round_s: float) -> None:
    """Warm the framework up (its first run builds what it caches); pick the runs a round taking about `round_s`."""
    await contender.run()
    per_run, _ = await seconds_per_run(contender.run, warm_runs)
    contender.runs = max(1, round(round_s / per_run))


def row(first: str, second: str, cells: list[str]) -> str:
    return f"{first:>6}  {second:<34}" + "".join(f"{cell:>13}" for cell in cells)


def print_header(tool_turns: int, contenders: list[Contender]) -> None:
    runs = ", ".join(f"{c.name} {c.runs}" for c in contenders)
    print(f"\nk={tool_turns}: {tool_turns + 1} steps a run; runs a round: {runs}")
    peers = len(contenders) - 1
    groups = [("wall us/step", len(contenders))] + [("peer/AgentKit, wall", peers), ("by CPU time", peers)] * (
        peers > 0
    )
    print(row("", "", []) + "".join(f"{label:>{13 * width}}" for label, width in groups))
    print(row("round", "order", [c.name for c in contenders] + [c.name for c in contenders[1:]] * 2))


async def measure(tool_turns: int, builds: list[tuple[str, Build]], rounds: int, round_s: float, warm: int) -> None:
    """Interleaved rounds at one k; prints each round's us/step and ratios, then the medians."""
    steps = tool_turns + 1
    contenders = [Contender(name, build(tool_turns)) for name, build in builds]
    for contender in contenders:
        await calibrate(contender, warm, round_s)
    print_header(tool_turns, contenders)
    agentkit, peers = contenders[0], contenders[1:]
    wall: dict[str, list[float]] = {p.name: [] for p in peers}
    cpu: dict[str, list[float]] = {p.name: [] for p in peers}
    for round_no in range(rounds):
        shift = round_no % len(contenders)
        order = contenders[shift:] + contenders[:shift]
        for contender in order:
            wall_s, cpu_s = await seconds_per_run(contender.run, contender.runs)
            contender.wall_us.append(wall_s / steps * 1e6)
            contender.cpu_us.append(cpu_s / steps * 1e6)
        for peer in peers:
            wall[peer.name].append(peer.wall_us[-1] / agentkit.wall_us[-1])
            cpu[peer.name].append(peer.cpu_us[-1] / agentkit.cpu_us[-1])
        cells = [f"{c.wall_us[-1]:,.1f}" for c in contenders]
        cells += [f"{ratios[p.name][-1]:.1f}x" for ratios in (wall, cpu) for p in peers]
        print(row(str(round_no + 1), ", ".join(c.name for c in order), cells))
    cells = [f"{statistics.median(c.wall_us):,.1f}" for c in contenders]
    cells += [f"{statistics.median(ratios[p.name]):.1f}x" for ratios in (wall, cpu) for p in peers]
    print(row("median", "", cells))
    print(row("", "CPU us/step, median", [f"{statistics.median(c.cpu_us):,.1f}" for c in contenders]))
    for peer in peers:
        by_wall, by_cpu = wall[peer.name], cpu[peer.name]
        ratio = statistics.median(by_wall)
        print(
            f"  k={tool_turns}: AgentKit {ratio:.1f}x faster per step than {peer.name} (median of the rounds' wall "
            f"ratios {min(by_wall):.1f}x to {max(by_wall):.1f}x; by CPU time {statistics.median(by_cpu):.1f}x); "
            f"aim >= {AIM:.0f}x {'met' if ratio >= AIM else 'NOT met'}"
        )


def load() -> str:
    """The 1, 5 and 15 minute load averages, where the system says them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


async def main(quick: bool, rounds: int) -> None:
    found = frameworks()
    versions = ", ".join(f"{name} {importlib.metadata.version(package)}" for name, package, _ in found)
    print(f"Python {sys.version.split()[0]}; {versions}; load average {load()}")
    print(
        "one step = one turn = one LLM call + one tool call (the last turn only answers): us/step = time a run / (k+1)"
    )
    builds = [(name, build) for name, _, build in found]
    for tool_turns in (10, 100):
        await measure(tool_turns, builds, rounds, round_s=0.05 if quick else 1.0, warm=1 if quick else 3)
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="short rounds, for a smoke run")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5, quick 2)")
    args = parser.parse_args()
    asyncio.run(main(args.quick, args.rounds or (2 if args.quick else 5)))
