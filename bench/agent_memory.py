"""What one long-lived `Agent` costs over many runs: resident memory and time per step as runs add up.

One `Agent` makes N runs (8,000 by default) of 10 tool turns and an answer, one after another,
with the cycling scripted LLM and an async no-op tool (`agent_harness`). At runs 500, 1,000,
2,000, 4,000 and 8,000 the bench collects garbage and reads the process's resident set size
(RSS, from /proc/self/statm, or the peak from getrusage where that file is missing); tracemalloc
stays off, so the figures are what the process really holds and the timings are not slowed by
tracing. It also times the steps between runs 500 and 1,000 and between 4,000 and 8,000: cost per
step should not grow with the number of runs behind it. The event loop turns once between runs,
as a caller's would: the in-memory runs never suspend, so it would not turn otherwise and would keep
every cancelled timeout timer (about 2.4 KiB a run). The aim (issue 20): RSS grows by at most
2 MiB from run 500 to run 4,000.

Run: `make bench` or `.venv/bin/python bench/agent_memory.py [--quick] [--runs N]`.
"""

import argparse
import asyncio
import gc
import os
import resource
import sys
import time
from pathlib import Path

from agent_harness import agentkit_agent, agentkit_run

TOOL_TURNS = 10
CHECKPOINTS = (500, 1_000, 2_000, 4_000, 8_000)
WINDOWS = ((500, 1_000), (4_000, 8_000))
GROWTH = (500, 4_000)
AIM_MIB = 2.0
MIB = 1024 * 1024


def rss_bytes() -> int:
    """The resident set size now; the peak so far where /proc/self/statm is missing (not Linux)."""
    try:
        resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def load() -> str:
    """The 1, 5 and 15 minute load averages, where the system says them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


async def main(runs: int) -> None:
    steps = TOOL_TURNS + 1
    agent = agentkit_agent(TOOL_TURNS)
    await agentkit_run(agent, TOOL_TURNS)  # the first run builds what the Agent caches
    gc.collect()
    rss = {1: rss_bytes()}
    print(f"Python {sys.version.split()[0]}; load average {load()}")
    print(f"one Agent, {runs:,} runs of {TOOL_TURNS} tool turns and an answer ({steps} steps: LLM call + tool call)")
    print(f"{'run':>7}{'RSS MiB':>10}{'KiB/run since the row above':>30}")
    print(f"{1:>7}{rss[1] / MIB:>10.1f}")
    checkpoints = sorted({c for c in CHECKPOINTS if c <= runs} | {runs})
    windows = [(first, last) for first, last in WINDOWS if last <= runs]
    started: dict[int, tuple[float, float]] = {}
    timings: dict[tuple[int, int], tuple[float, float]] = {}
    for run_no in range(2, runs + 1):
        await agentkit_run(agent, TOOL_TURNS)
        # the loop turns between runs, as a caller's does (see agent_peers.seconds_per_run)
        await asyncio.sleep(0)
        clocks = time.perf_counter(), time.process_time()
        for first, last in windows:
            if run_no == last:
                wall, cpu = started[first]
                runs_timed = last - first
                timings[first, last] = (clocks[0] - wall) / runs_timed, (clocks[1] - cpu) / runs_timed
        if run_no in checkpoints:
            gc.collect()
            rss[run_no] = rss_bytes()
            previous = max(c for c in rss if c < run_no)
            per_run = (rss[run_no] - rss[previous]) / 1024 / (run_no - previous)
            print(f"{run_no:>7,}{rss[run_no] / MIB:>10.1f}{per_run:>30.1f}")
        if any(run_no == first for first, _ in windows):
            started[run_no] = time.perf_counter(), time.process_time()  # after the checkpoint's collection
    for (first, last), (wall_s, cpu_s) in timings.items():
        wall_us, cpu_us = wall_s / steps * 1e6, cpu_s / steps * 1e6
        print(f"runs {first:,} to {last:,}: {wall_us:.1f} us/step wall, {cpu_us:.1f} us/step CPU")
    if len(timings) == len(WINDOWS):
        (early_wall, early_cpu), (late_wall, late_cpu) = timings.values()
        wall, cpu = late_wall / early_wall, late_cpu / early_cpu
        print(f"  the later window against the earlier: {wall:.2f}x wall, {cpu:.2f}x CPU")
    first, last = GROWTH
    if last in rss:
        grown = (rss[last] - rss[first]) / MIB
        verdict = "met" if grown <= AIM_MIB else "NOT met"
        print(f"RSS growth from run {first:,} to {last:,}: {grown:.1f} MiB; aim <= {AIM_MIB:.0f} MiB {verdict}")
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1,000 runs, for a smoke run")
    parser.add_argument("--runs", type=int, default=None, help="runs to make (default 8,000)")
    args = parser.parse_args()
    asyncio.run(main(args.runs or (1_000 if args.quick else 8_000)))
