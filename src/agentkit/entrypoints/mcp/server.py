"""Each agent as an MCP tool: a goal (and a session to continue) in, the answer and the run's id out.

A call is a run like any other (RunAgent): stored, traced and limited as the agent says, executed
in this process, owned by `mcp`. A run that does not succeed is an MCP tool error whose text names
the run, its status and why, so the client's model can read it.
"""

from collections.abc import Awaitable, Callable
from typing import Any, TypedDict

from dishka import AsyncContainer
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agentkit._version import __version__
from agentkit.application.agents.queries import AgentInfo, ListAgents
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import Run, RunStatus

MCP_OWNER = OwnerId("mcp")
RunGoal = Callable[[str, str, str | None], Awaitable[Run]]


class AgentAnswer(TypedDict):
    """What a call of an agent's tool returns."""

    answer: str
    run_id: str
    output: Any


class AgentRunFailed(ToolError):
    """The run ended without success: the client sees a tool error with this message (how it ended)."""


def agent_tools_server(agents: list[AgentInfo], run_goal: RunGoal) -> MCPServer:
    """An MCP server with one tool per agent, each running `run_goal(agent, goal, session_id)`."""
    server = MCPServer(
        "agentkit",
        version=__version__,
        instructions="Each tool is an AgentKit agent: give it a goal, get its answer and the run's id.",
    )
    for agent in agents:
        server.add_tool(
            _agent_tool(agent.name, run_goal),
            name=agent.name,
            description=(
                f"{agent.description or f'The AgentKit agent {agent.name!r}.'}\n"
                "`goal`: what the agent should do, in plain words; `session_id` (optional): a conversation "
                "to continue (letters, digits and . _ : -). Returns the answer and the run's id."
            ),
        )
    return server


def _agent_tool(name: str, run_goal: RunGoal) -> Callable[..., Awaitable[AgentAnswer]]:
    async def run_agent(goal: str, session_id: str | None = None) -> AgentAnswer:
        run = await run_goal(name, goal, session_id)
        if run.status is not RunStatus.SUCCEEDED:
            raise AgentRunFailed(f"run {run.id} ended {run.status.value}: {run.failure_reason or 'no reason given'}")
        return AgentAnswer(answer=run.answer or "", run_id=run.id, output=run.output)

    return run_agent


async def serve_stdio(container: AsyncContainer) -> None:
    """Serve the container's agents over stdio until the client closes the connection."""
    async with container() as request:
        agents = await (await request.get(ListAgents)).execute()

    async def run_goal(agent: str, goal: str, session_id: str | None) -> Run:
        async with container() as scope:
            run_agent = await scope.get(RunAgent)
            return await run_agent.execute(
                CreateRunInput(
                    owner=MCP_OWNER,
                    goal=goal,
                    session_id=SessionId(session_id) if session_id else None,
                    agent=agent,
                )
            )

    await agent_tools_server(agents, run_goal).run_stdio_async()
