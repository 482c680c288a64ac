"""RunAgent: create a run and execute it to the end, in this process (CLI and library use)."""

from agentkit.application.agent.loop import AgentLoop
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.domain.run import Run


class RunAgent:
    """Create a run and execute it right away; return it in its terminal status.

    Rules:
    - The run is stored as pending first, so even a run that fails at once is on record.
    - Errors in the input (empty goal, bad schema) raise before anything runs.
    """

    def __init__(self, *, create: CreateRun, loop: AgentLoop) -> None:
        self._create = create
        self._loop = loop

    async def execute(self, inp: CreateRunInput) -> Run:
        """Run the agent on the goal and return the finished run."""
        created = await self._create.execute(inp)
        if created.replayed or created.run.is_terminal:
            return created.run
        execution = self._loop.run(created.run)
        del created  # the pending version need not live as long as the run
        return await execution
