"""`agentkit run --follow ID`: a run's events from the HTTP API (Server-Sent Events), printed as they come.

A client of the API like any other: it works whichever process or worker executes the run, and
reconnects with Last-Event-ID when the connection drops, so no step is printed twice or missed.
httpx is imported by the command that runs (this module is loaded only then).
"""

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

import httpx

from agentkit.application.errors import ApplicationError, RunNotFound
from agentkit.domain.run import RunStatus

# Reconnections after a dropped connection (each after a short pause); then the command gives up.
RECONNECTS = 10
_PREVIEW = 200


class FollowFailed(ApplicationError):
    """The API could not be reached, or refused to stream the run."""

    code = "follow_failed"


async def follow_run(
    base_url: str,
    api_key: str | None,
    run_id: str,
    *,
    out: TextIO | None = None,
    as_json: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Print the run's events until its terminal status; 0 when it succeeded, else 1.

    Raises:
        RunNotFound: the API knows no such run for this key.
        FollowFailed: the API could not be reached (after RECONNECTS tries) or answered an error.
    """
    stream = out or sys.stdout
    headers = {"X-API-Key": api_key} if api_key else {}
    last_id: str | None = None
    final: dict[str, Any] | None = None
    tries = 0
    timeout = httpx.Timeout(10.0, read=None)  # the server sends keep-alives; a silent wait is not an error
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout, transport=transport) as client:
        while final is None:
            try:
                async for event_id, kind, data in _events(client, run_id, last_id):
                    tries = 0
                    last_id = event_id or last_id
                    if as_json:
                        print(json.dumps({"id": event_id, "event": kind, "data": data}), file=stream, flush=True)
                    elif kind == "step":
                        print(step_line(data), file=stream, flush=True)
                    elif kind == "status" and not ended(data):
                        print(f"status: {data['status']}", file=stream, flush=True)
                        for line in waiting_lines(data):
                            print(line, file=stream, flush=True)
                    if kind == "status" and ended(data):
                        final = data
                        break
            except httpx.TransportError as exc:
                tries += 1
                if tries > RECONNECTS:
                    raise FollowFailed(f"cannot reach the API at {base_url}: {exc}") from None
                await asyncio.sleep(min(0.2 * 2**tries, 5.0))
                continue
            if final is None:  # the server ended the stream early (it is stopping): resume
                tries += 1
                if tries > RECONNECTS:
                    raise FollowFailed("the API kept ending the stream before the run ended")
                await asyncio.sleep(0.2)
    if not as_json:
        print(outcome(final), file=stream, flush=True)
    return 0 if final["status"] == "succeeded" else 1


def waiting_lines(run: dict[str, Any]) -> list[str]:
    """What a paused run waits on, one line a call, with what to post (the follower keeps following)."""
    action = run.get("required_action") or {}
    lines = []
    for call in action.get("calls", []):
        if call.get("answer") is not None:
            continue
        where = "approvals" if call.get("kind") == "approval" else "tool_outputs"
        arguments = json.dumps(call.get("arguments"), ensure_ascii=False)
        lines.append(
            f"  waits: {call.get('name')}({arguments}) call {call.get('call_id')} digest {call.get('digest')}"
            f" -> POST /v1/runs/{run.get('id')}/{where}"
        )
    return lines


def ended(run: dict[str, Any]) -> bool:
    """Whether the run's status is terminal (a status this version does not know is not)."""
    try:
        return RunStatus(run["status"]).is_terminal
    except ValueError:
        return False


async def _events(
    client: httpx.AsyncClient, run_id: str, last_id: str | None
) -> AsyncIterator[tuple[str | None, str, dict[str, Any]]]:
    headers = {"Last-Event-ID": last_id} if last_id else {}
    async with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as response:
        if response.status_code == 404:
            raise RunNotFound(f"no run with id {run_id!r}")
        if response.status_code != 200:
            body = (await response.aread()).decode(errors="replace")
            try:
                detail = json.loads(body).get("detail", body)
            except ValueError:
                detail = body
            raise FollowFailed(f"the API answered {response.status_code}: {detail}")
        fields: dict[str, str] = {}
        data: list[str] = []
        async for line in response.aiter_lines():
            if line == "":
                if data and "event" in fields:
                    yield fields.get("id"), fields["event"], json.loads("\n".join(data))
                fields, data = {}, []
            elif not line.startswith(":"):  # comments are keep-alives
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "data":
                    data.append(value)
                else:
                    fields[name] = value


def step_line(step: dict[str, Any]) -> str:
    """One step as `agentkit run` prints it live."""
    head = f"[{step['step_no']}] {step['kind']:<5}{step['latency_ms']:7.1f} ms"
    if step["kind"] == "llm":
        head += f"  tokens in={step['input_tokens']} out={step['output_tokens']}"
        if step.get("error"):
            return f"{head}  ERROR {step['error']}"
        if step.get("tool_calls"):
            calls = ", ".join(f"{c['name']}({_arguments(c['arguments'])})" for c in step["tool_calls"])
            return f"{head}  -> {calls}"
        return f"{head}  -> answer: {_preview(step.get('text') or '')}"
    result = step.get("result") or {}
    shown = _preview(result.get("output", "")) if result.get("ok") else f"ERROR {result.get('error')}"
    mark = " [truncated]" if result.get("truncated") else ""
    return f"{head}  {step.get('tool_name')}({_arguments(step.get('arguments') or {})})\n      = {shown}{mark}"


def outcome(run: dict[str, Any]) -> str:
    """The status, token totals, reason and answer of a finished run."""
    usage = run.get("usage") or {}
    lines = [f"\nstatus: {run['status']}   tokens: in={usage.get('input_tokens')} out={usage.get('output_tokens')}"]
    if run.get("failure_reason"):
        lines.append(f"reason: {run['failure_reason']}")
    if run.get("answer"):
        lines.append(f"\n{run['answer']}")
    return "\n".join(lines)


def _arguments(arguments: dict[str, Any]) -> str:
    return _preview(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[:_PREVIEW] + "..."
