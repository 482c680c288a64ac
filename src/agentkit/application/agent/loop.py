"""The agent loop: ask the model, run the tools it asks for, feed the results back, repeat."""

from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

from agentkit.application.agent.deps import AgentChooser, LoopDeps
from agentkit.application.agent.execution import RunExecution
from agentkit.application.errors import StoreUnavailable
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run, RunStatus


class AgentLoop:
    """Runs one agent run from `pending` to a terminal status.

    Rules:
    - The conversation is the system prompt, the session's history, then the goal; tool output
      goes only into tool-role messages, never into the system prompt.
    - Tool calls of one turn run at once, at most TOOL_CONCURRENCY of a run (`ToolBatch`), with
      barriers at sequential and terminal tools; the model reads their results in its order.
    - Every LLM call and every tool call is recorded as a step, handed to the step pipeline, which
      stores and shows it off the run's path. A run's final status is written only once its trace
      is stored (the pipeline flushed); a run whose trace could not be stored does not end
      `succeeded` but `failed`, its answer kept. Observers that fail are logged and the run goes on.
    - The writes a run's outcome depends on (its start, its trace, its final status) are retried
      through a store outage, with backoff, for up to `store_retry_s`, while the lease keeper keeps
      the run's lease; StaleAttempt stops them at once.
    - Limits: max steps, repeated calls and token budget (the pure policy), the run timeout, each
      tool's timeout (the registry), and cancel, honoured at every step boundary and, for a turn's
      calls running at once, the moment it arrives (they are all stopped).
    - Every execution claims the run under a new attempt (a compare-and-set: two executors never
      both hold it). A run that was already running (its executor died, or handed it back) is
      resumed: the conversation is rebuilt from its stored steps (`replay`), no stored LLM response
      is asked for again, and a tool call without a stored result is made again only if the tool
      is idempotent; a non-idempotent call that may have started ends the run `failed`, saying why.
    - Before non-idempotent tools start, the trace is flushed and their calls recorded on the run
      (`calling`, all those starting at once in one write), so whoever resumes it knows which may
      have run.
    - The final status is persisted whatever happens. When the task is cancelled (the process is
      stopping), the run is handed back instead: its trace stored and its lease given up, so another
      executor (or this service, restarted) resumes it at once. A run that cannot store its outcome
      says so in the log; once its lease lapses the sweeper resumes it, or ends it `expired` after
      MAX_RUN_ATTEMPTS: every run still reaches a terminal status.

    The loop's dependencies are one `LoopDeps` (built once by the container); each run's state is a
    `RunExecution` built on them, with its agent's model, tools and configuration (`agents`).
    """

    def __init__(self, deps: LoopDeps, *, agents: AgentChooser | None = None) -> None:
        self.deps = deps
        self._agents = agents

    def request_cancel(self, run_id: RunId) -> None:
        """Tell a run executing here to cancel at its next step boundary."""
        self.deps.leases.mark_cancelled(run_id)

    def mark_followed(self, run_id: RunId) -> None:
        """Someone follows the run: its next LLM calls stream (if it executes here)."""
        self.deps.followed.follow(run_id)

    async def run_if_claimed(self, run_id: RunId, *, attempt: int, was: RunStatus) -> Run | None:
        """Claim the run at `attempt` and execute it; None when it could not be claimed so (nothing ran).

        A queue worker's path: the job says which attempt it was enqueued for, so the claim is the
        first statement (no read before it). A run that moved on meanwhile (a resumed run's job
        returned to the queue, say) is for the caller to read and `run` as it now stands.
        """
        deps = self.deps
        now = deps.clock.now()
        try:
            taken = await deps.runs.claim(
                run_id, attempt=attempt, now=now, until=now + timedelta(seconds=deps.config.lease_s)
            )
        except StoreUnavailable:
            return None  # the caller's path retries through the outage
        if taken is None:
            return None
        chosen = deps if self._agents is None else self._agents.deps_for(deps, taken.agent)
        return await RunExecution(chosen, taken, claimed_from=was, agents=self._agents).go()

    def run(self, run: Run) -> Coroutine[Any, Any, Run]:
        """Execute a pending run and return it in its terminal status (also persisted).

        A plain function returning the coroutine: one frame less for every run in flight.
        """
        deps = self.deps if self._agents is None else self._agents.deps_for(self.deps, run.agent)
        return RunExecution(deps, run, agents=self._agents).go()
