"""Recovery: the settings a scheduler needs to run a lease sweeper beside itself."""

import msgspec

from agentkit.adapters.scheduling.sweeper import LeaseSweeper
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.recover_runs import RecoverLapsedRuns
from agentkit.application.runs.run_tree import RunTree


class Recovery(msgspec.Struct, frozen=True, kw_only=True):
    """How a scheduler's sweeper finds lapsed runs and how often it looks.

    Attributes:
        runs: Where the lapsed runs are.
        clock: Tells when a lease lapsed.
        max_attempts: Claims after which a lapsed run expires instead of resuming (MAX_RUN_ATTEMPTS).
        interval_s: The pause between passes (half the lease).
        grace_s: How long past its expiry a lease is left alone (`lapse_grace_s`).
        tree: Links runs to their child runs: the scheduler hands it every run that ended or
            waits, and the sweeper rechecks waiting runs with it (None: no agent calls another).
    """

    runs: RunRepository
    clock: Clock
    max_attempts: int
    interval_s: float
    grace_s: float = 0.0
    tree: RunTree | None = None

    def sweeper_for(self, scheduler: RunScheduler) -> LeaseSweeper:
        """A sweeper that hands the lapsed runs it finds to `scheduler`."""
        recover = RecoverLapsedRuns(
            runs=self.runs,
            scheduler=scheduler,
            clock=self.clock,
            max_attempts=self.max_attempts,
            grace_s=self.grace_s,
            tree=self.tree,
        )
        return LeaseSweeper(recover, interval_s=self.interval_s)
