"""Rows of `runs` and `steps` to domain Structs and back: the only place that knows both shapes."""

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from agentkit.domain.actions import RequiredAction
from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.messages import FinishReason, ToolCall, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, PromptRef, Step, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema


class _LLMResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What an LLM step stores in `steps.result` (its tokens and error have columns of their own)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason | None = None
    attempts: int = 1
    refusal: str | None = None
    provider_data: dict[str, Any] | None = None
    error_type: str | None = None
    response_id: str | None = None
    response_model: str | None = None
    provider_finish_reason: str | None = None
    redacted: bool = False
    agent: str | None = None


def _text(value: str | None) -> str | None:
    # PostgreSQL's text cannot hold NUL, and would refuse the whole row: what a model or a tool
    # produced (an answer, an error, a binary file read as text) keeps the rest, NUL as U+FFFD.
    # (JSONB columns get the same treatment in the engine's JSON serializer.)
    if value is not None and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def is_uuid(value: str) -> bool:
    """Whether a run id can be a `runs.id`: a UUID in its canonical spelling, the one run ids have.

    Other ids are simply not found, never sent: PostgreSQL refuses some spellings Python accepts
    (`urn:uuid:...`) with an error, and the in-memory store matches ids exactly. The HTTP API turns
    other spellings into the canonical one first.
    """
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def run_to_row(run: Run) -> dict[str, Any]:
    """The column values of a run."""
    return {
        "id": run.id,
        "owner": run.owner,
        "session_id": run.session_id,
        "goal": run.goal,
        "status": run.status.value,
        "final_answer": _text(run.answer),
        "output": run.output,
        "output_schema": run.output_schema,
        "failure_reason": _text(run.failure_reason),
        "max_steps": run.max_steps,
        "token_budget": run.token_budget,
        "total_input_tokens": run.input_tokens,
        "total_output_tokens": run.output_tokens,
        "cost_usd": run.cost_usd,
        "cost_budget": run.cost_budget,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "expires_at": run.expires_at,
        "heartbeat_at": run.heartbeat_at,
        "cancel_requested": run.cancel_requested,
        "idempotency_key": run.idempotency_key,
        "request_fingerprint": run.request_fingerprint,
        "attempt": run.attempt,
        "calling": list(run.calling) or None,
        "agent": run.agent,
        "agent_version": run.agent_version,
        "action": run.action,
        "pauses": run.pauses,
        "approval_required": list(run.approval_required) or None,
        "client_tools": list(run.client_tools) or None,
        "callback_url": run.callback_url,
        "stream": run.stream,
        "parent_run_id": run.parent_run_id,
        "parent_call_id": run.parent_call_id,
        "parent_step_no": run.parent_step_no,
        "lineage": list(run.lineage) or None,
        "children_input_tokens": run.children_input_tokens,
        "children_output_tokens": run.children_output_tokens,
        "children_cost_usd": run.children_cost_usd,
        "turns": run.turns,
        "children_turns": run.children_turns,
    }


def row_to_run(row: Mapping[Any, Any]) -> Run:
    """The run a `runs` row holds."""
    return Run(
        id=RunId(str(row["id"])),
        owner=row["owner"],
        session_id=row["session_id"],
        goal=row["goal"],
        status=RunStatus(row["status"]),
        answer=row["final_answer"],
        output=row["output"],
        output_schema=row["output_schema"],
        failure_reason=row["failure_reason"],
        max_steps=row["max_steps"],
        token_budget=row["token_budget"],
        input_tokens=row["total_input_tokens"],
        output_tokens=row["total_output_tokens"],
        cost_usd=row["cost_usd"],
        cost_budget=row["cost_budget"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        expires_at=row["expires_at"],
        heartbeat_at=row["heartbeat_at"],
        cancel_requested=row["cancel_requested"],
        idempotency_key=row["idempotency_key"],
        request_fingerprint=row["request_fingerprint"],
        attempt=row["attempt"],
        calling=tuple(row["calling"] or ()),
        agent=row["agent"],
        agent_version=row["agent_version"],
        action=None if row["action"] is None else msgspec.convert(row["action"], RequiredAction),
        pauses=row["pauses"],
        approval_required=tuple(row["approval_required"] or ()),
        client_tools=tuple(msgspec.convert(row["client_tools"] or [], list[ToolSchema])),
        callback_url=row["callback_url"],
        stream=row["stream"],
        parent_run_id=None if row["parent_run_id"] is None else RunId(str(row["parent_run_id"])),
        parent_call_id=row["parent_call_id"],
        parent_step_no=row["parent_step_no"],
        lineage=tuple(row["lineage"] or ()),
        children_input_tokens=row["children_input_tokens"],
        children_output_tokens=row["children_output_tokens"],
        children_cost_usd=row["children_cost_usd"],
        turns=row["turns"],
        children_turns=row["children_turns"],
    )


def step_to_row(step: Step) -> dict[str, Any]:
    """The column values of a step (the `id` is left to the database)."""
    common = {"run_id": step.run_id, "step_no": step.step_no, "created_at": step.created_at}
    if isinstance(step, LLMStep):
        return {
            **common,
            "kind": "llm",
            "tool_name": None,
            "call_id": None,
            "args": None,
            "result": _LLMResult(
                text=step.text,
                tool_calls=step.tool_calls,
                finish_reason=step.finish_reason,
                attempts=step.attempts,
                refusal=step.refusal,
                provider_data=step.provider_data,
                error_type=step.error_type,
                response_id=step.response_id,
                response_model=step.response_model,
                provider_finish_reason=step.provider_finish_reason,
                redacted=step.redacted,
                agent=step.agent,
            ),
            "error": _text(step.error),
            "latency_ms": step.latency_ms,
            "input_tokens": step.usage.input_tokens,
            "output_tokens": step.usage.output_tokens,
            "cache_read_tokens": step.usage.cache_read_tokens,
            "cache_write_tokens": step.usage.cache_write_tokens,
            "request": step.prompt,
            "cost_usd": step.cost_usd,
        }
    return {
        **common,
        "kind": "tool",
        "tool_name": _text(step.tool_name),
        "call_id": _text(step.call_id),
        "args": step.arguments,
        "result": _tool_result(step),
        "error": _text(step.result.error),
        "latency_ms": step.latency_ms,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "request": None,
        "cost_usd": None,
    }


def _tool_result(step: ToolStep) -> Any:
    """What a tool step stores in `steps.result`: its ToolResult, and beside its keys (which ToolResult
    does not read back) whether it was stored redacted and when the call started.

    The start is kept in the JSON rather than a column of its own: nothing looks steps up by it,
    and the trace writer's statement and the table stay as they are.
    """
    if step.started_at is None and not step.redacted:
        return step.result
    stored = msgspec.to_builtins(step.result)
    if step.redacted:
        stored["redacted"] = True
    if step.started_at is not None:
        stored["started_at"] = step.started_at.isoformat()
    return stored


def message_rows(step: Step) -> list[dict[str, Any]]:
    """The `run_messages` rows an LLM step was the first of its run to send."""
    if not isinstance(step, LLMStep) or step.sent is None:
        return []
    return [
        {"run_id": step.run_id, "seq": stored.seq, "digest": stored.digest, "message": stored.message}
        for stored in step.sent.messages
    ]


def tool_set_rows(step: Step) -> list[dict[str, Any]]:
    """The `run_tool_sets` row of the tool set an LLM step was the first of its run to offer, if any."""
    if not isinstance(step, LLMStep) or step.sent is None or step.sent.tool_set is None:
        return []
    tool_set = step.sent.tool_set
    return [{"run_id": step.run_id, "digest": tool_set.digest, "schemas": tool_set.schemas}]


def row_to_step(row: Mapping[Any, Any]) -> Step:
    """The step a `steps` row holds."""
    run_id = RunId(str(row["run_id"]))
    if row["kind"] == "llm":
        result = msgspec.convert(row["result"] or {}, _LLMResult)
        return LLMStep(
            run_id=run_id,
            step_no=row["step_no"],
            created_at=row["created_at"],
            latency_ms=row["latency_ms"],
            usage=Usage(
                input_tokens=row["input_tokens"],
                output_tokens=row["output_tokens"],
                cache_read_tokens=row["cache_read_tokens"],
                cache_write_tokens=row["cache_write_tokens"],
            ),
            text=result.text,
            tool_calls=result.tool_calls,
            finish_reason=result.finish_reason,
            attempts=result.attempts,
            error=row["error"],
            refusal=result.refusal,
            provider_data=result.provider_data,
            error_type=result.error_type,
            prompt=None if row["request"] is None else msgspec.convert(row["request"], PromptRef),
            response_id=result.response_id,
            response_model=result.response_model,
            provider_finish_reason=result.provider_finish_reason,
            cost_usd=row["cost_usd"],
            redacted=result.redacted,
            agent=result.agent,
        )
    stored = row["result"] or {}
    started_at = stored.get("started_at")
    return ToolStep(
        run_id=run_id,
        step_no=row["step_no"],
        created_at=row["created_at"],
        latency_ms=row["latency_ms"],
        call_id=ToolCallId(row["call_id"] or ""),
        tool_name=row["tool_name"] or "",
        arguments=row["args"] or {},
        result=msgspec.convert(row["result"], ToolResult),
        redacted=bool(stored.get("redacted", False)),
        started_at=None if started_at is None else datetime.fromisoformat(started_at),
    )
