"""`agentkit worker`: execute queued runs (queue mode); start as many as you like, on any machine."""

import argparse

from agentkit.entrypoints.cli.root import CommandRoot


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `worker` to the parser."""
    worker = sub.add_parser(
        "worker",
        help="execute queued runs (RUN_MODE=queue); stops on SIGTERM, handing unfinished runs back",
    )
    worker.add_argument("--concurrency", type=int, help="runs executed at once (overrides WORKER_CONCURRENCY)")
    worker.set_defaults(handler=worker_command)


async def worker_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """Work until told to stop."""
    await root.work(overrides={"worker_concurrency": args.concurrency})
    return 0
