"""Overload: at 2x its capacity, `agentkit serve` refuses the excess at once and keeps accepted runs fast.

The runs are `bench/http_throughput.py`'s (three scripted LLM turns, two calls of an async no-op
tool, five trace steps) on real PostgreSQL and Redis, through `agentkit serve` as a subprocess.

Each round, because other jobs on the machine move the capacity by the minute:
1. Capacity: a closed loop of 50 clients against a server whose cap is out of reach (a lower cap
   would refuse some of the clients, which then spin on 503s); its completions per second are C.
2. Right after, an open loop at 1x C and one at 2x C against a server with its default cap
   (MAX_RUNS_IN_FLIGHT unset: the database pool, 30; `--cap N` to try another), each request timed
   from the moment it was due: accepted runs (201, succeeded) p50 and p99, refusals (503
   `overloaded`) p50 and p99, the refused share, any other answer, and the generator's own send
   lag (how late it sent: the machine's two cores also run PostgreSQL and the load generator).
Then, once, 2x the median round's C against the uncapped server: overload as it was before. At the
end, the rows each server stored: runs by status, and succeeded runs missing steps.

The load goes through a raw HTTP/1.1 client (`raw_http.py`): httpx costs so much CPU per request
at these rates that the generator, not the server, became the bottleneck.

Aims (issue 6), at 2x C: no steps missing from succeeded runs; refusals answered in under 50 ms;
the accepted runs' p99 within 2x of their p99 at 1x C.

The servers are DATABASE_URL's and REDIS_URL's (default: the local ones on 127.0.0.1); the bench
works in a database `agentkit_bench_*` and a Redis key prefix of its own, and removes both at the end.

Run: `.venv/bin/python bench/overload.py [--quick] [--duration S] [--rounds N]` (about 3 minutes).
"""

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass

from sqlalchemy.engine import URL

from agentkit.adapters.postgres import parse_database_url
from agentkit.entrypoints.wiring.settings import load_settings, runs_in_flight_cap
from http_harness import (
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
)
from load_loops import RawLoad, Window, closed_loop, open_loop, percentile_ms

CLIENTS = 50
CONNECTIONS = 1000  # enough that the client's pool never holds a request back, even without the cap
CAPPED_KEY, UNCAPPED_KEY = "bench-capped", "bench-uncapped"
UNCAPPED = "1000000"
ACCEPTED, REFUSED = "ok", "HTTP 503 overloaded"


@dataclass(frozen=True)
class Phase:
    """One open-loop window, summarised."""

    label: str
    offered: float  # requests due per second
    window: Window

    def count(self, outcome: str) -> int:
        return len(self.window.latencies.get(outcome, []))

    @property
    def total(self) -> int:
        return sum(len(each) for each in self.window.latencies.values())

    def p(self, outcome: str, q: int) -> float:
        return percentile_ms(self.window.latencies.get(outcome, []), q)

    @property
    def refused_share(self) -> float:
        return self.count(REFUSED) / max(self.total, 1)

    @property
    def others(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.window.latencies.items() if k not in (ACCEPTED, REFUSED)}

    def line(self) -> str:
        return (
            f"| {self.label} | {self.offered:,.0f} | {self.count(ACCEPTED) / self.window.duration_s:,.0f}"
            f" | {self.p(ACCEPTED, 50):,.1f} | {self.p(ACCEPTED, 99):,.1f} | {self.refused_share:.0%}"
            f" | {self.p(REFUSED, 50):.1f} | {self.p(REFUSED, 99):.1f} | {sum(self.others.values())}"
            f" | {percentile_ms(self.window.send_lag, 99):.1f} |"
        )

    def diagnosis(self) -> str:
        w = self.window
        served = w.served.get(REFUSED, [])
        return (
            f"refused p99 from sent {percentile_ms(served, 99):.1f} ms; server cpu {w.server_busy:.0%} of a core;"
            f" generator cpu {w.generator_cpu_s / w.duration_s:.0%}; host busy {w.host_busy:.0%}; others {self.others}"
        )


async def paced(label: str, target: Target, rate: float, args: argparse.Namespace) -> Phase:
    window = await open_loop(
        target, rate=rate, warmup_s=args.warmup, duration_s=args.duration, connections=CONNECTIONS, load=RawLoad
    )
    phase = Phase(label, rate, window)
    print(f"{label}: {phase.line()}\n  {phase.diagnosis()}", file=sys.stderr, flush=True)
    return phase


@dataclass(frozen=True)
class Round:
    """One round: the capacity measured just before, and the paced phases at 1x and 2x of it."""

    capacity: float
    one: Phase
    two: Phase

    @property
    def ratio(self) -> float:
        """The accepted runs' p99 at 2x over their p99 at 1x."""
        return self.two.p(ACCEPTED, 99) / max(self.one.p(ACCEPTED, 99), 1e-9)


async def load(scratch: Scratch, args: argparse.Namespace) -> None:
    """Both servers up; rounds of capacity, 1x and 2x; once 2x without the cap; the report."""
    cap = {"max_runs_in_flight": str(args.cap)} if args.cap else {}
    capped_argv, capped_env = agentkit_command(scratch, api_key=CAPPED_KEY, **cap)
    uncapped_argv, uncapped_env = agentkit_command(scratch, api_key=UNCAPPED_KEY, max_runs_in_flight=UNCAPPED)
    capped_port, uncapped_port = free_port(), free_port()
    async with (
        server("capped", capped_argv, capped_env, capped_port, scratch.work) as capped_pid,
        server("uncapped", uncapped_argv, uncapped_env, uncapped_port, scratch.work) as uncapped_pid,
    ):
        capped = Target("capped", f"http://127.0.0.1:{capped_port}/v1/runs", {"X-API-Key": CAPPED_KEY}, capped_pid)
        uncapped = Target(
            "uncapped", f"http://127.0.0.1:{uncapped_port}/v1/runs", {"X-API-Key": UNCAPPED_KEY}, uncapped_pid
        )
        rounds = []
        for round_no in range(1, args.rounds + 1):
            # Capacity right before the paced phases (other jobs on the machine change it by the minute),
            # on the uncapped server: a cap below CLIENTS would refuse some clients, which then spin.
            closed = await closed_loop(
                uncapped, clients=CLIENTS, warmup_s=args.warmup, duration_s=args.duration, load=RawLoad
            )
            print(f"round {round_no}: capacity {closed.rate:.1f} runs/s", file=sys.stderr, flush=True)
            one = await paced(f"{round_no}: 1x capped", capped, closed.rate, args)
            two = await paced(f"{round_no}: 2x capped", capped, 2 * closed.rate, args)
            rounds.append(Round(closed.rate, one, two))
        middle = sorted(rounds, key=lambda r: r.two.p(ACCEPTED, 99))[(len(rounds) - 1) // 2]
        before = await paced("2x uncapped", uncapped, 2 * middle.capacity, args)
    for name in ("capped", "uncapped"):
        log_problems(name, scratch.work / f"{name}.log")
    report(rounds, middle, before, await check_rows(scratch.dsn), args)


def report(rounds: list[Round], middle: Round, before: Phase, rows: dict[str, Rows], args: argparse.Namespace) -> None:
    """The Markdown table of every round, the aims round by round, and the rows check."""
    cap = args.cap or runs_in_flight_cap(load_settings({}))
    print(f"\nMAX_RUNS_IN_FLIGHT {cap}; {args.rounds} round(s): capacity (closed loop, {CLIENTS} clients,")
    print(f"{args.duration:g} s), then {args.duration:g} s paced at 1x and at 2x of it, each after {args.warmup:g} s")
    print(
        "| round: load | offered /s | accepted /s | accepted p50 ms | accepted p99 ms | refused | refused p50 ms"
        " | refused p99 ms | other answers | send lag p99 ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for each in rounds:
        print(each.one.line())
        print(each.two.line())
    print(before.line())
    fast = sum(r.two.p(REFUSED, 99) < 50 for r in rounds)
    within = sum(r.ratio <= 2 for r in rounds)
    ratios = ", ".join(f"{r.ratio:.2f}x" for r in rounds)
    refusals = ", ".join(f"{r.two.p(REFUSED, 99):.0f}" for r in rounds)
    print(f"\nrefusals at 2x, p99 ms by round: {refusals} (aim < 50: met in {fast} of {len(rounds)})")
    print(f"accepted p99, 2x / 1x, by round: {ratios} (aim <= 2x: met in {within} of {len(rounds)})")
    print(
        f"median round (by 2x accepted p99): accepted p99 {middle.one.p(ACCEPTED, 99):.0f} ms at 1x,"
        f" {middle.two.p(ACCEPTED, 99):.0f} ms at 2x; without the cap at 2x: {before.p(ACCEPTED, 99):,.0f} ms"
    )
    for key, name in ((CAPPED_KEY, "capped"), (UNCAPPED_KEY, "uncapped")):
        stored = rows.get(owner_of(key))
        if stored is None:
            continue
        statuses = ", ".join(f"{status} {count}" for status, count in sorted(stored.by_status.items()))
        print(
            f"rows: {name} stored {stored.runs} runs ({statuses}); {stored.succeeded_missing_steps} succeeded"
            f" runs miss {stored.steps_missing} steps (aim 0)"
        )


async def measure(server_url: URL, redis_url: str, args: argparse.Namespace) -> None:
    async with scratch_state(server_url, redis_url) as scratch:
        await load(scratch, args)


def main() -> None:
    """Parse the arguments, find the servers, run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short round, for a smoke test")
    parser.add_argument("--duration", type=float, help="seconds measured per window (default 10, quick 3)")
    parser.add_argument("--rounds", type=int, help="rounds of each phase (default 3, quick 1)")
    parser.add_argument("--cap", type=int, help="MAX_RUNS_IN_FLIGHT of the capped server (default: its default)")
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 10.0)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = 1.0 if args.quick else 2.0
    server_url = parse_database_url(os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    asyncio.run(measure(server_url, redis_url, args))


if __name__ == "__main__":
    main()
