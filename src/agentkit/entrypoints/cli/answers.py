"""`agentkit runs approve|reject|answer`: answer a paused run through the HTTP API.

Through the API, not the state: the answer is stored by the server that owns the run, which resumes it
on its own executors (or its workers), so nothing of the run executes in this short-lived process. The
command reads the run first, shows the call it answers, and posts the call's digest with the
answer: an approval binds to the exact name and arguments shown (`--digest` pins the digest you saw
elsewhere; a run whose call changed is then refused). httpx is imported by the command that runs.
"""

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from agentkit.application.errors import ApplicationError, RunNotFound
from agentkit.entrypoints.cli.root import CommandRoot

if TYPE_CHECKING:
    import httpx


class AnswerRefused(ApplicationError):
    """The API refused the answer, or could not be reached."""

    code = "answer_refused"


def register(runs_sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add `approve`, `reject` and `answer` under `agentkit runs`."""
    for name, what in (("approve", "approve a call a paused run waits on"), ("reject", "reject such a call")):
        command = runs_sub.add_parser(name, help=f"{what} (through the API)")
        command.add_argument("run_id")
        command.add_argument("call_id")
        command.add_argument("--reason", help="why (a rejection's reason is shown to the model)")
        _connection_options(command)
        command.set_defaults(handler=approve_command, decision=name)
    answer = runs_sub.add_parser("answer", help="give the output of a client tool's call a paused run waits on")
    answer.add_argument("run_id")
    answer.add_argument("call_id")
    answer.add_argument("output", help="the output: JSON is sent as JSON, anything else as text; @FILE reads a file")
    _connection_options(answer)
    answer.set_defaults(handler=answer_command)


def _connection_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--digest", help="refuse unless the call's digest is this one (as you saw it)")
    command.add_argument("--url", help="the API (default: http://HOST:PORT of the settings)")
    command.add_argument("--api-key", help="the API key (default: the first of API_KEYS)")


async def approve_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs approve|reject RUN CALL [--reason]`."""
    body: dict[str, Any] = {"call_id": args.call_id, "decision": args.decision}
    if args.reason:
        body["reason"] = args.reason
    return await _answer(args, root, "approvals", body, kind="approval")


async def answer_command(args: argparse.Namespace, root: CommandRoot) -> int:
    """`agentkit runs answer RUN CALL OUTPUT`."""
    text: str = args.output
    if text.startswith("@"):
        with open(text[1:], encoding="utf-8") as file:  # noqa: ASYNC230 - one small file, read once
            text = file.read()
    try:
        output: Any = json.loads(text)
    except ValueError:
        output = text
    return await _answer(args, root, "tool_outputs", {"call_id": args.call_id, "output": output}, kind="client_tool")


async def _answer(args: argparse.Namespace, root: CommandRoot, route: str, body: dict[str, Any], *, kind: str) -> int:
    import httpx

    url, key = root.api_endpoint()
    headers = {"X-API-Key": args.api_key or key or ""}
    async with httpx.AsyncClient(base_url=args.url or url, headers=headers, timeout=30.0) as client:
        run = await _request(client, "GET", f"/v1/runs/{args.run_id}")
        call = _waiting_call(run, args.call_id, kind)
        if args.digest and args.digest != call["digest"]:
            raise AnswerRefused(f"call {args.call_id} has digest {call['digest']}, not {args.digest}: not answered")
        print(f"{call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})", file=sys.stderr)
        run = await _request(client, "POST", f"/v1/runs/{args.run_id}/{route}", {**body, "digest": call["digest"]})
    print(f"run {run['id']}: {run['status']}")
    from agentkit.entrypoints.cli.follow import waiting_lines

    for line in waiting_lines(run):
        print(line)
    return 0


def _waiting_call(run: dict[str, Any], call_id: str, kind: str) -> dict[str, Any]:
    calls: list[dict[str, Any]] = (run.get("required_action") or {}).get("calls", [])
    call = next((c for c in calls if c.get("call_id") == call_id), None)
    if call is None:
        waiting = ", ".join(c["call_id"] for c in calls if c.get("answer") is None) or "nothing"
        raise AnswerRefused(
            f"run {run['id']} ({run['status']}) does not wait on call {call_id!r}; it waits on {waiting}"
        )
    if call.get("kind") != kind:
        command = "agentkit runs answer" if call.get("kind") == "client_tool" else "agentkit runs approve|reject"
        raise AnswerRefused(f"call {call_id} waits on {call.get('kind')}: use {command}")
    return call


async def _request(
    client: "httpx.AsyncClient", method: str, path: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    import httpx

    try:
        response = await client.request(method, path, json=body)
    except httpx.TransportError as exc:
        raise AnswerRefused(f"cannot reach the API at {client.base_url}: {exc}") from None
    if response.status_code == 404:
        raise RunNotFound(f"no run {path.split('/')[3]!r} for this key")
    if response.status_code >= 400:
        try:
            detail = str(response.json().get("detail") or response.text)
        except (ValueError, AttributeError):
            detail = response.text
        raise AnswerRefused(f"the API answered {response.status_code}: {detail}")
    result: Any = response.json()
    return dict(result)
