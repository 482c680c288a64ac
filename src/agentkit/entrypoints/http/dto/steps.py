"""One step of a run: an LLM call or a tool call, as the trace and the events show it."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import msgspec

from agentkit.domain.steps import LLMStep, Step
from agentkit.entrypoints.http.dto.messages import ToolCallView


class LLMRequestView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What an LLM call sent: the run's messages 1..`message_count` and the tool set `tools_digest`;
    after a handoff, with the message `system_seq` (the new agent's system prompt) in place of message 1."""

    message_count: int
    tools_digest: str | None
    provider: str
    model: str
    parameters: dict[str, Any]
    payloads: bool
    system_seq: int | None = None


class LLMResponseMetaView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the provider said about its answer."""

    id: str | None = None
    model: str | None = None
    finish_reason: str | None = None


class ToolResultView(msgspec.Struct, kw_only=True):
    """What a tool call returned."""

    ok: bool
    output: str
    error: str | None
    truncated: bool


class StepView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step of a trace: an LLM call (`kind=llm`) or a tool call (`kind=tool`).

    `created_at` is when the step ended. A tool call also says when it started (`started_at`):
    the calls of one model turn run at once, so their times overlap, and their steps are numbered
    in the order they ended.
    """

    step_no: int
    kind: Literal["llm", "tool"]
    created_at: datetime
    latency_ms: float
    input_tokens: int
    output_tokens: int
    # the parts of input_tokens read from / written to the provider's prompt cache (shown when not 0)
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    text: str | None = None
    tool_calls: list[ToolCallView] | None = None
    finish_reason: str | None = None
    attempts: int | None = None
    error: str | None = None
    error_type: str | None = None
    cost_usd: float | None = None
    request: LLMRequestView | None = None
    response: LLMResponseMetaView | None = None
    tool_name: str | None = None
    call_id: str | None = None
    arguments: dict[str, Any] | None = None
    result: ToolResultView | None = None
    started_at: datetime | None = None
    agent: str | None = None


def step_agents(steps: Sequence[Step]) -> list[str | None]:
    """The agent that made each step, in a run that can hand off (its LLM steps name it; a tool call
    is its turn's); None for every step of other runs, which are all the run's agent's."""
    current = next((step.agent for step in steps if isinstance(step, LLMStep) and step.agent), None)
    if current is None:
        return [None] * len(steps)
    agents: list[str | None] = []
    for step in steps:
        if isinstance(step, LLMStep) and step.agent:
            current = step.agent
        agents.append(current)
    return agents


def step_view(step: Step, agent: str | None = None) -> StepView:
    """The wire view of a step (made by `agent`, when the caller names it)."""
    if isinstance(step, LLMStep):
        return StepView(
            agent=agent or step.agent,
            step_no=step.step_no,
            kind="llm",
            created_at=step.created_at,
            latency_ms=round(step.latency_ms, 3),
            input_tokens=step.usage.input_tokens,
            output_tokens=step.usage.output_tokens,
            cache_read_tokens=step.usage.cache_read_tokens or None,
            cache_write_tokens=step.usage.cache_write_tokens or None,
            text=step.text or None,
            tool_calls=[ToolCallView(id=c.id, name=c.name, arguments=c.arguments) for c in step.tool_calls] or None,
            finish_reason=step.finish_reason.value if step.finish_reason else None,
            attempts=step.attempts,
            error=step.error,
            error_type=step.error_type,
            cost_usd=step.cost_usd,
            request=None
            if step.prompt is None
            else LLMRequestView(
                message_count=step.prompt.message_count,
                tools_digest=step.prompt.tools_digest,
                provider=step.prompt.provider,
                model=step.prompt.model,
                parameters=step.prompt.parameters,
                payloads=step.prompt.payloads,
                system_seq=step.prompt.system_seq,
            ),
            response=LLMResponseMetaView(
                id=step.response_id, model=step.response_model, finish_reason=step.provider_finish_reason
            )
            if step.response_id or step.response_model or step.provider_finish_reason
            else None,
        )
    result = step.result
    return StepView(
        agent=agent,
        step_no=step.step_no,
        kind="tool",
        created_at=step.created_at,
        latency_ms=round(step.latency_ms, 3),
        input_tokens=0,
        output_tokens=0,
        tool_name=step.tool_name,
        call_id=step.call_id,
        arguments=step.arguments,
        result=ToolResultView(ok=result.ok, output=result.output, error=result.error, truncated=result.truncated),
        started_at=step.started_at,
    )
