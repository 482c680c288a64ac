"""GET /v1/runs/{id}/trace: a run's steps and, asked for, what its LLM calls sent."""

import msgspec

from agentkit.domain.run import Run
from agentkit.domain.steps import RunPrompts, Step
from agentkit.entrypoints.http.dto.fields import StatusText
from agentkit.entrypoints.http.dto.messages import StoredMessageView, message_view
from agentkit.entrypoints.http.dto.steps import StepView, step_agents, step_view
from agentkit.entrypoints.http.dto.tools import ToolView, tool_view


class TraceView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A run's steps in order, the agent (and its profile's version) it ran with; with `include=prompts`,
    also what its LLM calls sent.

    Each message is listed once (`messages`, by `seq`) and each tool set once (`tool_sets`, by
    digest): LLM step N sent `messages[0:steps[N].request.message_count]` and
    `tool_sets[steps[N].request.tools_digest]`; after a handoff its `request.system_seq` names the
    message (listed after the conversation, with a negative `seq`) it sent in place of message 1.
    """

    run_id: str
    status: StatusText
    steps: list[StepView]
    agent: str
    agent_version: str | None
    cost_usd: float | None = None
    messages: list[StoredMessageView] | None = None
    tool_sets: dict[str, list[ToolView]] | None = None


def trace_view(run: Run, steps: list[Step], prompts: RunPrompts | None = None) -> TraceView:
    """The wire view of a trace, with what the LLM calls sent when `prompts` is given."""
    view = TraceView(
        run_id=run.id,
        status=run.status.value,
        steps=[step_view(step, agent) for step, agent in zip(steps, step_agents(steps), strict=True)],
        agent=run.agent,
        agent_version=run.agent_version,
    )
    view.cost_usd = run.cost_usd
    if prompts is not None:
        view.messages = [
            StoredMessageView(seq=stored.seq, digest=stored.digest, message=message_view(stored.message))
            for stored in prompts.messages
        ]
        view.tool_sets = {digest: [tool_view(s) for s in schemas] for digest, schemas in prompts.tool_sets.items()}
    return view
