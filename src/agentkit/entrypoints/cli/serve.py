"""`agentkit serve`: the HTTP API (the root serves it; this is the command line)."""

import argparse

from agentkit.entrypoints.cli.root import CommandRoot


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `serve` to the parser."""
    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", help="interface to listen on (overrides HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (overrides PORT)")
    serve.set_defaults(handler=serve_command)


async def serve_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """Start the API; with no servers configured, on a private PostgreSQL and Redis."""
    await root.serve(overrides={"host": args.host, "port": args.port})
    return 0
