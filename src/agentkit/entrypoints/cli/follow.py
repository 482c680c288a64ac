"""`agentkit run --follow ID`: a run's events from the HTTP API (Server-Sent Events), printed as they come.

A client of the API like any other: it works whichever process or worker executes the run, and
reconnects with Last-Event-ID when the connection drops, so no step is printed twice or missed.
On a terminal the model's text and call arguments are written as they come (`delta` events), each
step's figures under them; elsewhere (and with --json) whole steps only, as the trace has them.
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
from agentkit.entrypoints.cli.run_view import is_terminal

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
    tokens: bool | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Print the run's events until its terminal status; 0 when it succeeded, else 1.

    `tokens`: write fragments as they come (None: when `out` is a terminal and not `as_json`).

    Raises:
        RunNotFound: the API knows no such run for this key.
        FollowFailed: the API could not be reached (after RECONNECTS tries) or answered an error.
    """
    stream = out or sys.stdout
    if tokens is None:
        tokens = not as_json and is_terminal(stream)
    fragments = TokenLine(stream) if tokens else None
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
                    if kind == "delta":  # a fragment: the step event that follows has it all
                        if fragments is not None:
                            fragments.write(data)
                    elif as_json:
                        print(json.dumps({"id": event_id, "event": kind, "data": data}), file=stream, flush=True)
                    elif kind == "step":
                        streamed = fragments is not None and fragments.end(data)
                        print(step_line(data, streamed=streamed), file=stream, flush=True)
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
        shown = fragments is not None and final.get("answer") == fragments.text
        print(outcome(final, answer=not shown), file=stream, flush=True)
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


class TokenLine:
    """A streamed step's fragments written as they come: a line per part (the text, each call's arguments)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._part: tuple[int, str] | None = None  # the step and part being written
        self.text = ""  # what was written of the step's text

    def write(self, delta: dict[str, Any]) -> None:
        """Write one fragment (a `delta` event's data)."""
        step_no, kind, piece = delta["step_no"], delta["kind"], delta.get("text", "")
        if kind == "retry":
            self._end_part()
            self._print(f"[{step_no}] the run was resumed: step {step_no} is asked again\n")
            self.text = ""
            return
        part = (step_no, "text" if kind == "text" else f"call {delta.get('index', 0)}")
        if part != self._part:
            if self._part is None or self._part[0] != step_no:
                self.text = ""
            self._end_part()
            call = f"-> {delta.get('name') or 'call'}(" if kind == "tool_call" else ""
            self._print(f"[{step_no}] llm   {call}")
            self._part = part
        if kind == "text":
            self.text += piece
        self._print(piece)

    def end(self, step: dict[str, Any]) -> bool:
        """The step arrived: write what of its text the stream missed, end the line; whether any was streamed."""
        if self._part is None or self._part[0] != step["step_no"]:
            self._end_part()
            return False
        text = step.get("text") or ""
        if self._part[1] == "text" and text.startswith(self.text) and len(text) > len(self.text):
            # fragments are dropped from the log once their step is stored: a slow reader missed the rest
            self._print(text[len(self.text) :])
            self.text = text
        self._end_part()
        return True

    def _end_part(self) -> None:
        if self._part is not None:
            self._print(")\n" if self._part[1].startswith("call") else "\n")
            self._part = None

    def _print(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()


def step_line(step: dict[str, Any], *, streamed: bool = False) -> str:
    """One step as `agentkit run` prints it live (`streamed`: its figures only, under what was written of it)."""
    head = f"[{step['step_no']}] {step['kind']:<5}{step['latency_ms']:7.1f} ms"
    if streamed:
        head = f"    {step['latency_ms']:7.1f} ms"
    if step["kind"] == "llm":
        head += f"  tokens in={step['input_tokens']} out={step['output_tokens']}"
        if step.get("error"):
            return f"{head}  ERROR {step['error']}"
        if step.get("tool_calls"):
            calls = ", ".join(f"{c['name']}({_arguments(c['arguments'])})" for c in step["tool_calls"])
            return f"{head}  -> {calls}"
        if streamed:
            return head
        return f"{head}  -> answer: {_preview(step.get('text') or '')}"
    result = step.get("result") or {}
    shown = _preview(result.get("output", "")) if result.get("ok") else f"ERROR {result.get('error')}"
    mark = " [truncated]" if result.get("truncated") else ""
    return f"{head}  {step.get('tool_name')}({_arguments(step.get('arguments') or {})})\n      = {shown}{mark}"


def outcome(run: dict[str, Any], *, answer: bool = True) -> str:
    """The status, token totals, reason and answer of a finished run (not the answer when it was just streamed)."""
    usage = run.get("usage") or {}
    lines = [f"\nstatus: {run['status']}   tokens: in={usage.get('input_tokens')} out={usage.get('output_tokens')}"]
    if run.get("failure_reason"):
        lines.append(f"reason: {run['failure_reason']}")
    if run.get("answer") and answer:
        lines.append(f"\n{run['answer']}")
    return "\n".join(lines)


def _arguments(arguments: dict[str, Any]) -> str:
    return _preview(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[:_PREVIEW] + "..."
