"""Every subcommand, from the modules that define them."""

import argparse

from agentkit.entrypoints.cli import admin, agent, serve, worker


def register_all(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add every subcommand to the parser."""
    agent.register(sub)
    serve.register(sub)
    worker.register(sub)
    admin.register(sub)
