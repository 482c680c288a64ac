"""Sustained POST /v1/runs per second through `agentkit serve`, next to a bare Litestar endpoint doing the same writes.

Each AgentKit run makes two tool calls (an async no-op) and answers: three scripted LLM turns, five
trace steps, on real PostgreSQL and Redis (STATE_BACKEND=external). The baseline is
`bench/bare_endpoint.py`: Litestar under uvicorn, raw asyncpg, the same rows in the same tables of
the same scratch database; its /runs makes AgentKit's writes only, /runs/with-reads also AgentKit's
reads. Both servers are subprocesses with one uvicorn worker, configured alike.

1. Closed loop: 50 clients (httpx) post back to back for `--duration` s after a warm-up; completions
   per second, p50 and p99 latency, errors (a non-2xx answer, a run not `succeeded`, an exception),
   the server's CPU time per run and how busy the whole machine was. Rounds alternate bare, bare
   with reads, AgentKit; the median round of each is reported.
2. Open loop: requests paced at 75 % of the bare endpoint's rate from step 1, each timed from the
   moment it was due (so a server that falls behind shows it), against both; and AgentKit at 75 %
   of its own rate, for reference. Rounds alternate; the round with the median p99 is reported.

At the end it prints the warnings and errors each server logged, and checks the rows: every run
stored must have succeeded with its five steps.

The servers are DATABASE_URL's and REDIS_URL's (default: the local ones on 127.0.0.1). The bench
creates a database `agentkit_bench_*` and a Redis key prefix of its own, and removes both at the end.
BENCH_PROFILE=out.prof runs the AgentKit server under cProfile and writes its profile there.

Run: `.venv/bin/python bench/http_throughput.py [--quick] [--duration S] [--rounds N]` (about 4 minutes).
"""

import argparse
import asyncio
import os
import sys
from collections import Counter
from collections.abc import Awaitable, Callable

from sqlalchemy.engine import URL

from agentkit.adapters.postgres import parse_database_url
from agentkit.entrypoints.wiring.settings import load_settings
from http_harness import (
    API_KEY,
    BENCH_DIR,
    PYTHON,
    Rows,
    Scratch,
    Target,
    agentkit_command,
    check_rows,
    free_port,
    log_problems,
    owner_of,
    scratch_state,
    server,
    usage,
)
from load_loops import Result, closed_loop, open_loop, summarize

CLIENTS = 50


async def measure(server_url: URL, redis_url: str, args: argparse.Namespace) -> None:
    """Create the scratch state, start both servers, load them, print the figures, clean up."""
    async with scratch_state(server_url, redis_url) as scratch:
        await load(scratch, args)


async def paced(target: Target, *, rate: float, warmup_s: float, duration_s: float) -> Result:
    """The open loop's successful runs as a Result; every other answer is an error."""
    window = await open_loop(target, rate=rate, warmup_s=warmup_s, duration_s=duration_s, connections=4 * CLIENTS)
    errors = Counter({outcome: len(each) for outcome, each in window.latencies.items() if outcome != "ok"})
    end = usage(target.pid)  # after the drain: every request due in the window has had its CPU
    return summarize(window.latencies.get("ok", []), errors, duration_s, window.start, end)


Job = tuple[str, Callable[[], Awaitable[Result]]]


async def in_rounds(label: str, jobs: list[Job], rounds: int, *, by_p99: bool = False) -> dict[str, Result]:
    """Run the jobs one after another, `rounds` times over; the median round of each."""
    results: dict[str, list[Result]] = {name: [] for name, _ in jobs}
    for round_no in range(1, rounds + 1):
        for name, job in jobs:
            result = await job()
            results[name].append(result)
            print(f"{label} {round_no} {name:<13} {fmt(result)}", file=sys.stderr, flush=True)
    return {name: median_result(each, by_p99=by_p99) for name, each in results.items()}


async def load(scratch: Scratch, args: argparse.Namespace) -> None:
    """Start both servers, run the closed-loop rounds, then the paced ones; print the figures."""
    work = scratch.work
    # the cap on runs in flight out of reach, as the bare endpoint has none: this bench measures speed,
    # bench/overload.py what the cap does (50 clients would otherwise meet the default cap of 30)
    agentkit_argv, agentkit_env = agentkit_command(scratch, profile=args.profile, max_runs_in_flight="1000000")
    # the same number of database connections as AgentKit's default pool
    pool = str(load_settings({}).state.database_pool_size)
    bare_env = {**os.environ, "BARE_DATABASE_URL": scratch.dsn, "BARE_POOL_SIZE": pool}
    bare_argv = [PYTHON, str(BENCH_DIR / "bare_endpoint.py")]
    bare_port, agentkit_port = free_port(), free_port()
    warmup_s, duration_s = args.warmup, args.duration
    async with (
        server("bare", bare_argv, bare_env, bare_port, work) as bare_pid,
        server("agentkit", agentkit_argv, agentkit_env, agentkit_port, work) as agentkit_pid,
    ):
        bare = Target("bare", f"http://127.0.0.1:{bare_port}/runs", {}, bare_pid)
        reads = Target("bare+reads", f"http://127.0.0.1:{bare_port}/runs/with-reads", {}, bare_pid)
        agentkit = Target("agentkit", f"http://127.0.0.1:{agentkit_port}/v1/runs", {"X-API-Key": API_KEY}, agentkit_pid)

        def closed(target: Target) -> Job:
            return target.name, lambda: closed_loop(target, clients=CLIENTS, warmup_s=warmup_s, duration_s=duration_s)

        def at(name: str, target: Target, rate: float) -> Job:
            return name, lambda: paced(target, rate=rate, warmup_s=warmup_s, duration_s=duration_s)

        best = await in_rounds("closed", [closed(bare), closed(reads), closed(agentkit)], args.rounds)
        rate, own_rate = 0.75 * best["bare"].rate, 0.75 * best["agentkit"].rate
        jobs = [at("bare", bare, rate), at("agentkit", agentkit, rate), at("agentkit@own", agentkit, own_rate)]
        slow = await in_rounds("paced", jobs, args.rounds, by_p99=True)
    for name in ("bare", "agentkit"):
        log_problems(name, work / f"{name}.log")
    report(best, slow, rate, own_rate, await check_rows(scratch.dsn), args)


def median_result(results: list[Result], *, by_p99: bool = False) -> Result:
    """The median round by rate (or by p99), whole, so that its figures belong together."""
    ordered = sorted(results, key=lambda r: r.p99_ms if by_p99 else r.rate)
    return ordered[(len(ordered) - 1) // 2]


def fmt(r: Result) -> str:
    """One line of figures."""
    return (
        f"{r.rate:8.1f} runs/s  p50 {r.p50_ms:7.1f} ms  p99 {r.p99_ms:7.1f} ms"
        f"  server cpu {r.cpu_ms:.2f} ms/run  host busy {r.host_busy:.0%}"
        f"  errors {r.errors.total()} {dict(r.errors) or ''}"
    )


def report(
    best: dict[str, Result],
    paced: dict[str, Result],
    rate: float,
    own_rate: float,
    rows: dict[str, Rows],
    args: argparse.Namespace,
) -> None:
    """Print the Markdown table and the two ratios."""
    print(f"\n{args.rounds} round(s) of {args.duration:g} s after {args.warmup:g} s warm-up; the median round of each")
    print("| load | server | runs/s | p50 ms | p99 ms | errors | server CPU ms/run | host CPU busy |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [(f"closed, {CLIENTS} clients", name, r) for name, r in best.items()]
    lines += [(f"paced {own_rate if name.endswith('@own') else rate:,.0f}/s", name, r) for name, r in paced.items()]
    for load_name, name, r in lines:
        print(
            f"| {load_name} | {name} | {r.rate:,.0f} | {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.errors.total()} "
            f"| {r.cpu_ms:.2f} | {r.host_busy:.0%} |"
        )
    rate_ratio = best["agentkit"].rate / best["bare"].rate
    reads_ratio = best["agentkit"].rate / best["bare+reads"].rate
    p99_ratio = paced["agentkit"].p99_ms / paced["bare"].p99_ms
    own_ratio = paced["agentkit@own"].p99_ms / paced["bare"].p99_ms
    print(f"\nthroughput agentkit / bare: {rate_ratio:.2f}x (aim >= 0.8x; against bare+reads {reads_ratio:.2f}x)")
    print(f"p99 at 75 % of bare's max rate, agentkit / bare: {p99_ratio:.2f}x (aim <= 2x)")
    print(f"p99 at 75 % of agentkit's own max rate, against bare's at 75 % of its: {own_ratio:.2f}x")
    for owner, stored in sorted(rows.items()):
        server_name = "bare" if owner == "bare" else "agentkit" if owner == owner_of(API_KEY) else owner
        complete = stored.by_status.get("succeeded", 0) - stored.succeeded_missing_steps
        incomplete = stored.runs - complete
        print(f"rows: {server_name} stored {stored.runs} runs, {incomplete} of them not succeeded with 5 steps")


def main() -> None:
    """Parse the arguments, find the servers, run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round, for a smoke test")
    parser.add_argument("--duration", type=float, help="seconds measured per window (default 10, quick 3)")
    parser.add_argument("--rounds", type=int, help="rounds of each phase per server (default 3, quick 1)")
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 10.0)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = 1.0 if args.quick else 2.0
    args.profile = os.path.abspath(os.environ["BENCH_PROFILE"]) if os.environ.get("BENCH_PROFILE") else None
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    asyncio.run(measure(server_url, redis_url, args))


if __name__ == "__main__":
    main()
