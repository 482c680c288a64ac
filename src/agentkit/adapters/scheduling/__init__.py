"""Run schedulers: who executes accepted runs."""

from agentkit.adapters.scheduling.inline import InlineRunScheduler

__all__ = ["InlineRunScheduler"]
