"""Agents as tools: the tool a model calls to start a child run of another agent.

A profile names the agents it may call (`agents = [...]` in AGENTS_FILE). Each appears to the model
as a tool `ask_<agent>` with the callee's description and one `task` argument; a call does not run
here: it pauses the run (`waiting`) and starts a child run whose goal is the task, and the child's
end is the call's result (see `application.runs.run_tree`).
"""

import uuid
from typing import Any, Final

import msgspec

from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.tools import ToolSchema

AGENT_TOOL_PREFIX: Final = "ask_"
HANDOFF_TOOL_PREFIX: Final = "transfer_to_"
# a stable namespace: a child's id follows from its parent, the turn and the call, so a parent that
# resumes and pauses again on the same turn names the same children (none is started twice)
_CHILD_NAMESPACE: Final = uuid.UUID("6f1d4c1e-3f43-4f5e-9a0c-6a1c2b7e5d21")

TASK_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "What the agent is to do, with everything it needs to know: it sees nothing else.",
        }
    },
    "required": ["task"],
    "additionalProperties": False,
}


class AgentTool(msgspec.Struct, frozen=True, kw_only=True):
    """Another agent as one of this agent's tools.

    Attributes:
        agent: The agent called.
        schema: The tool the model sees (`ask_<agent>`, the agent's description, a `task`).
    """

    agent: str
    schema: ToolSchema

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.schema.name


def agent_tool(agent: str, description: str) -> AgentTool:
    """The tool that calls `agent`."""
    about = description.strip() or f"Ask the agent {agent!r} to do a task."
    return AgentTool(
        agent=agent,
        schema=ToolSchema(
            name=f"{AGENT_TOOL_PREFIX}{agent}",
            description=f"{about} (Another agent: it answers with its result.)",
            parameters=TASK_PARAMETERS,
        ),
    )


def handoff_tool(agent: str, description: str) -> AgentTool:
    """The tool that hands the run to `agent`: the conversation goes on with its instructions and tools."""
    about = f" ({description.strip()})" if description.strip() else ""
    return AgentTool(
        agent=agent,
        schema=ToolSchema(
            name=f"{HANDOFF_TOOL_PREFIX}{agent}",
            description=f"Hand this conversation to the agent {agent!r}{about}; it answers from here on.",
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
        ),
    )


def task_of(arguments: dict[str, Any]) -> str | None:
    """The task a call gives the agent, or None when the arguments hold none."""
    task = arguments.get("task")
    return task if isinstance(task, str) else None


def child_run_id(parent: RunId, turn_step: int, call_id: ToolCallId) -> RunId:
    """The id of the child run a call starts (the same for the same parent, turn and call)."""
    return RunId(str(uuid.uuid5(_CHILD_NAMESPACE, f"{parent}:{turn_step}:{call_id}")))
