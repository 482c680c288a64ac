"""A run as every route shows it (and webhooks send it), and a page of runs."""

from datetime import datetime
from typing import Any

import msgspec

from agentkit.domain.run import Run, RunStatus
from agentkit.entrypoints.http.dto.actions import RequiredActionView, action_view
from agentkit.entrypoints.http.dto.fields import StatusText


class Usage(msgspec.Struct, kw_only=True):
    """Tokens spent."""

    input_tokens: int
    output_tokens: int


class ChildRunView(msgspec.Struct, kw_only=True):
    """A child run: another agent's run, started by one of this run's calls."""

    id: str
    agent: str
    status: StatusText
    call_id: str | None
    step_no: int | None
    link: str


class RunLinks(msgspec.Struct, kw_only=True):
    """Where to read more, and act."""

    self: str
    trace: str
    cancel: str
    approvals: str
    tool_outputs: str
    webhooks: str


class RunView(msgspec.Struct, kw_only=True):
    """A run: its status, answer and what it cost."""

    id: str
    status: StatusText
    goal: str
    session_id: str | None
    answer: str | None
    output: Any
    failure_reason: str | None
    max_steps: int
    token_budget: int | None
    cost_budget: float | None
    usage: Usage
    cost_usd: float | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    links: RunLinks
    agent: str
    agent_version: str | None
    required_action: RequiredActionView | None = None
    approval_required: list[str] = []
    client_tools: list[str] = []
    callback_url: str | None = None
    parent_run_id: str | None = None
    parent_call_id: str | None = None
    parent_step_no: int | None = None
    depth: int = 0
    tree_usage: Usage | None = None
    tree_cost_usd: float | None = None
    children: list[ChildRunView] | None = None


class RunListView(msgspec.Struct, kw_only=True):
    """A page of runs, newest first; `next` is the link to the page after it (null on the last)."""

    runs: list[RunView]
    next_cursor: str | None
    next: str | None


def run_links(url: str) -> RunLinks:
    """The links of the run at `url`."""
    return RunLinks(
        self=url,
        trace=f"{url}/trace",
        cancel=f"{url}/cancel",
        approvals=f"{url}/approvals",
        tool_outputs=f"{url}/tool_outputs",
        webhooks=f"{url}/webhooks",
    )


def run_view(run: Run, base: str = "/v1/runs", *, children: list[Run] | None = None) -> RunView:
    """The wire view of a run; with `children` (GET /v1/runs/{id}), its child runs too."""
    url = f"{base}/{run.id}"
    return RunView(
        id=run.id,
        status=run.status.value,
        goal=run.goal,
        session_id=run.session_id,
        answer=run.answer,
        output=run.output,
        failure_reason=run.failure_reason,
        max_steps=run.max_steps,
        token_budget=run.token_budget,
        cost_budget=run.cost_budget,
        usage=Usage(input_tokens=run.input_tokens, output_tokens=run.output_tokens),
        cost_usd=run.cost_usd,
        cancel_requested=run.cancel_requested,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        links=run_links(url),
        required_action=action_view(run.action) if run.status in _WAITING_ON_ACTION else None,
        approval_required=list(run.approval_required),
        client_tools=[tool.name for tool in run.client_tools],
        callback_url=run.callback_url,
        agent=run.agent,
        agent_version=run.agent_version,
        parent_run_id=run.parent_run_id,
        parent_call_id=run.parent_call_id,
        parent_step_no=run.parent_step_no,
        depth=run.depth,
        # the tree's totals: its own and its ended child runs' (the same as its own when it has none)
        tree_usage=Usage(input_tokens=run.tree_input_tokens, output_tokens=run.tree_output_tokens),
        tree_cost_usd=run.tree_cost_usd,
        children=None if children is None else [_child_view(child, base) for child in children],
    )


_WAITING_ON_ACTION = frozenset({RunStatus.REQUIRES_ACTION, RunStatus.WAITING})


def _child_view(child: Run, base: str) -> ChildRunView:
    return ChildRunView(
        id=child.id,
        agent=child.agent,
        status=child.status.value,
        call_id=child.parent_call_id,
        step_no=child.parent_step_no,
        link=f"{base}/{child.id}",
    )
