"""Run schedulers: who executes accepted runs, and the sweeper that resumes the runs of dead executors."""

from agentkit.adapters.scheduling.inline import InlineRunScheduler
from agentkit.adapters.scheduling.recovery import Recovery
from agentkit.adapters.scheduling.sweeper import LeaseSweeper

__all__ = ["InlineRunScheduler", "LeaseSweeper", "Recovery"]
