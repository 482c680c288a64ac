"""AnswerRun: approve or reject a paused run's call, or give it a client tool's output; the last answer resumes it."""

import msgspec
import structlog

from agentkit.application.errors import ApplicationError, RunConflict
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain import run as runs
from agentkit.domain.actions import CallAnswer, Decision
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.run import Run, RunStatus

logger = structlog.get_logger(__name__)

# Concurrent answers to one run each retry on the compare-and-set this often before giving up.
_TRIES = 5


class RunAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """An answer to one call a paused run waits on.

    Attributes:
        run_id: The run.
        owner: Who answers (only the run's owner may; None: an admin).
        call_id: The call answered.
        decision: approve or reject (an approval), or output (a client tool's).
        digest: The call's digest as the run shows it: an approval must name it, so it approves
            exactly the call that was shown; a client tool's output may.
        reason: Why the call was rejected; the model reads it.
        output: The client tool's output (untrusted, like any tool's).
    """

    run_id: RunId
    owner: OwnerId | None
    call_id: ToolCallId
    decision: Decision
    digest: str | None = None
    reason: str | None = None
    output: str | None = None


class AnswerRun:
    """Store an answer to a paused run's call; once every call is answered, hand the run to an executor.

    Rules:
    - Only a run in `requires_action` takes answers (RunConflict otherwise: it ended, or goes on).
    - The answer must fit its call (the domain's `answer_call`: a known call, not yet answered, of the
      right kind, naming the call's digest); otherwise ActionRefused, and nothing is stored.
    - Answers are stored by compare-and-set, so two given at once are both kept (the second re-reads).
    - With the last answer the run goes back to `running` with its lease lapsed: this process's
      scheduler (or the queue's workers) takes it at once, and should that fail, the next sweep does.
      The executor goes on from the stored steps, with the answers: an approved call runs, a
      rejected one is an error the model reads, a client tool's output is its result.
    """

    def __init__(self, *, runs: RunRepository, scheduler: RunScheduler, clock: Clock) -> None:
        self._runs = runs
        self._scheduler = scheduler
        self._clock = clock

    async def execute(self, answer: RunAnswer) -> Run:
        """Store the answer; return the run as it now stands."""
        given = CallAnswer(
            decision=answer.decision, answered_at=self._clock.now(), reason=answer.reason, output=answer.output
        )
        for _ in range(_TRIES):
            run = await load_owned(self._runs, answer.run_id, answer.owner)
            if run.status is not RunStatus.REQUIRES_ACTION or run.action is None:
                raise RunConflict(f"run {run.id} is {run.status.value}: it waits on no answer")
            answered = runs.give_answer(run, answer.call_id, answer.digest, given, now=self._clock.now())
            if not await self._runs.save_answer(answered, expected=run.action):
                continue  # another answer (or a cancel, or the expiry) came first: look again
            logger.info("run_answered", run_id=run.id, call_id=answer.call_id, decision=answer.decision.value)
            if answered.status is RunStatus.RUNNING:
                await self._resume(answered)
            return answered
        raise RunConflict(f"run {answer.run_id} changed while it was being answered; try again")

    async def _resume(self, run: Run) -> None:
        try:
            taken = await self._scheduler.resume(run)
        except ApplicationError:
            taken = False
        if not taken:
            # its lease has lapsed: the next sweep, in any process, resumes it
            logger.info("run_resume_deferred", run_id=run.id)
