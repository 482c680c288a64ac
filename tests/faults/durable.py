"""The durable-runs fault suite's world: an API and workers in queue mode, a counting model, counted tools.

- `CountingModel`: an OpenAI-compatible `/v1/chat/completions` server on loopback. Each run's goal is
  unique; the turn is the number of assistant messages in the request. Every answer carries a serial
  (`r<n>`) in its text, so a stored LLM step says which request produced it, and the server keeps
  every request it was sent: a stored response asked for again would show as a later request for
  the same goal and turn.
  Each process has a base URL of its own (`/<name>/v1`), so the server also knows who asked.
- The tools: `lookup` (idempotent, slow enough to be killed in) and `charge` (not idempotent). Every
  execution of either appends a line to a file first, so a repeated call shows. With FAULT_STALL_ONCE
  set (a file path), the first `lookup` of the whole world blocks its worker's event loop for
  FAULT_STALL_S (time.sleep in an async tool: no renewal, no sweep, nothing runs there meanwhile).
  A lookup of something `slow` takes FAULT_SLOW_S where that is set (one worker's setting, say).
- Each run: lookup, then charge, then the answer: three LLM steps and two tool steps. A goal that
  starts with `batch:` asks for three lookups in one turn (`a`, `slow`, `b`), then answers; one
  that starts with `batch+charge:` asks for a lookup and a charge in one turn, then answers.
- Agent trees (`TREE_AGENTS`): a goal `tree:<x>` calls the agent `helper` with the task `child:<x>`,
  then answers; `child:<x>` looks up `slow`, then answers.
"""

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.faults.app import API_KEY, AppServer
from tests.faults.conftest import FaultStack

TOOLS = '''"""The durable-runs suite's tools."""

import asyncio
import os
import time

from agentkit import ToolContext, tool


@tool(idempotent=True)
async def lookup(q: str, ctx: ToolContext) -> str:
    """Look something up (reads only: safe to repeat).

    Args:
        q: What to look up.
    """
    with open(os.environ["FAULT_LOOKUP_LOG"], "a") as log:
        log.write(f"{ctx.run_id} {ctx.call_id} {q}\\n")
    slow = os.environ.get("FAULT_SLOW_S") if q == "slow" else None
    await asyncio.sleep(float(slow or os.environ["FAULT_LOOKUP_S"]))
    once = os.environ.get("FAULT_STALL_ONCE")
    if once:
        try:
            with open(once, "x") as marker:  # the first lookup anywhere stalls, no other
                marker.write(os.environ["FAULT_WORKER"])
        except FileExistsError:
            pass
        else:
            time.sleep(float(os.environ["FAULT_STALL_S"]))  # blocks the event loop, as a stuck process would
    return f"found {q}"


@tool
async def charge(amount: int, ctx: ToolContext) -> str:
    """Charge an amount (a side effect: never to be repeated).

    Args:
        amount: How much.
    """
    with open(os.environ["FAULT_CHARGE_LOG"], "a") as log:
        log.write(f"{ctx.run_id} {ctx.call_id} {ctx.idempotency_key}\\n")
    await asyncio.sleep(float(os.environ["FAULT_CHARGE_S"]))
    return f"charged {amount}"
'''


def _completion(serial: int, turn: int, goal: str) -> dict[str, Any]:
    text = f"r{serial}"
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "tool_calls"
    if goal.startswith("tree:"):
        if turn == 0:
            message["tool_calls"] = [_call("call_helper", "ask_helper", {"task": "child:" + goal[5:]})]
        else:
            message["content"], finish = f"done {text}", "stop"
    elif goal.startswith("child:"):
        if turn == 0:
            message["tool_calls"] = [_call("call_slow", "lookup", {"q": "slow"})]
        else:
            message["content"], finish = f"done {text}", "stop"
    elif goal.startswith(("batch:", "batch+charge:")):
        if turn == 0 and goal.startswith("batch:"):
            message["tool_calls"] = [_call(f"call_{q}", "lookup", {"q": q}) for q in ("a", "slow", "b")]
        elif turn == 0:
            message["tool_calls"] = [
                _call("call_a", "lookup", {"q": "a"}),
                _call("call_charge", "charge", {"amount": 5}),
            ]
        else:
            message["content"], finish = f"done {text}", "stop"
    elif turn == 0:
        message["tool_calls"] = [_call("call_lookup", "lookup", {"q": goal})]
    elif turn == 1:
        message["tool_calls"] = [_call("call_charge", "charge", {"amount": 5})]
    else:
        message["content"], finish = f"done {text}", "stop"
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fault-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


TREE_AGENTS = """
[agents.boss]
description = "Delegates."
tools = []
agents = ["helper"]

[agents.helper]
description = "Looks things up."
tools = ["lookup"]
"""


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


class CountingModel:
    """The scripted model server; `requests[(goal, turn)]` lists the serials it answered with, `callers` who asked.

    Args:
        delay_s: How long each answer takes (runs wait on the model, and can be killed there).
    """

    def __init__(self, delay_s: float = 0.1) -> None:
        self.delay_s = delay_s
        self.requests: dict[tuple[str, int], list[int]] = defaultdict(list)
        self.callers: dict[int, str] = {}  # serial -> the process that asked (its base URL's name)
        self._lock = threading.Lock()
        self._serial = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                messages = body["messages"]
                goal = next(m["content"] for m in messages if m["role"] == "user")
                turn = sum(1 for m in messages if m["role"] == "assistant")
                caller = self.path.split("/v1/")[0].strip("/")
                with model._lock:
                    model._serial += 1
                    serial = model._serial
                    model.requests[(goal, turn)].append(serial)
                    model.callers[serial] = caller
                time.sleep(model.delay_s)
                payload = json.dumps(_completion(serial, turn, goal)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.root}/v1"

    def url_for(self, caller: str) -> str:
        """The base URL a process named `caller` uses: the server records who asked."""
        return f"{self.root}/{caller}/v1"

    def __enter__(self) -> "CountingModel":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def total(self) -> int:
        """Requests answered so far."""
        return self._serial


class QueueWorld:
    """An API and workers in queue mode on the fault stack, with the counting model and the tools."""

    def __init__(self, stack: FaultStack, model: CountingModel, **settings: str) -> None:
        self.stack = stack
        self.model = model
        self.charges = stack.work / "charges.log"
        self.charges.touch()
        self.lookups = stack.work / "lookups.log"
        self.lookups.touch()
        self.settings = {
            "RUN_MODE": "queue",
            "RUN_LEASE_S": "3",
            "MAX_RUN_ATTEMPTS": "3",
            "WORKER_CONCURRENCY": "25",
            "SHUTDOWN_GRACE_S": "1",
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": model.url,
            "LLM_MODEL": "fault-model",
            "OPENAI_API_KEY": "sk-fault-" + "0" * 20,
            "LLM_MAX_RETRIES": "1",
            "AGENTKIT_TOOL_MODULES": "durable_tools",
            "FAULT_CHARGE_LOG": str(self.charges),
            "FAULT_LOOKUP_LOG": str(self.lookups),
            "FAULT_LOOKUP_S": "0.3",
            "FAULT_CHARGE_S": "0.05",
            "RESPONSE_TIMEOUT_S": "60",
            **settings,
        }
        self.api = self._process("api", "serve")
        self.workers: list[AppServer] = []

    def _process(self, name: str, command: str, **settings: str) -> AppServer:
        # a worker's own settings win over the world's
        process = self.stack.app(name, command=command, **{**self.settings, "FAULT_WORKER": name, **settings})
        (process.work / "durable_tools.py").write_text(TOOLS)
        process.env["AGENTKIT_TOOL_MODULES"] = "durable_tools"
        process.env["LLM_BASE_URL"] = self.model.url_for(name)
        return process

    def start(self, workers: int = 2) -> None:
        """Start the API and the workers."""
        self.api.start()
        for index in range(workers):
            self.add_worker(f"worker-{index}")

    def add_worker(self, name: str, **settings: str) -> AppServer:
        """Start one more worker (with these settings of its own)."""
        worker = self._process(name, "worker", **settings)
        worker.start()
        self.workers.append(worker)
        return worker

    def stop(self) -> None:
        """Stop every process still running."""
        for process in (*self.workers, self.api):
            process.kill()

    def charged(self) -> dict[tuple[str, str], int]:
        """How often `charge` started, by (run id, call id)."""
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for line in self.charges.read_text().splitlines():
            run_id, call_id, _ = line.split(" ")
            counts[(run_id, call_id)] += 1
        return dict(counts)

    def looked_up(self) -> dict[tuple[str, str], int]:
        """How often `lookup` started, by (run id, call id)."""
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for line in self.lookups.read_text().splitlines():
            run_id, call_id, _ = line.split(" ")
            counts[(run_id, call_id)] += 1
        return dict(counts)

    def client(self, timeout_s: float = 120.0) -> httpx.AsyncClient:
        """An HTTP client for the API."""
        return httpx.AsyncClient(base_url=self.api.url, headers={"X-API-Key": API_KEY}, timeout=timeout_s)


def repeated_llm_requests(model: CountingModel, goal: str, trace: dict[str, Any]) -> list[str]:
    """Stored responses of the run that the model was asked for again after giving them (should be none)."""
    found = []
    llm_steps = [step for step in trace["steps"] if step["kind"] == "llm"]
    for turn, step in enumerate(llm_steps):
        text = step.get("text") or ""
        serial = int(text.split("r")[-1])
        later = [s for s in model.requests[(goal, turn)] if s > serial]
        if later:
            found.append(f"turn {turn}: stored r{serial}, asked again as {later}")
    return found


def asked_twice(
    model: CountingModel, goal: str, trace: dict[str, Any], *, lost: frozenset[str] = frozenset()
) -> list[str]:
    """The run's turns whose answer the model was asked for twice (should be none).

    Either a stored answer asked for again (`repeated_llm_requests`), or a turn asked for by two
    executors that lived on: one may have been a stale one that went on after another attempt took
    the run. A question asked by a worker that was killed (`lost`), its answer never stored, must be
    asked again; it does not count.
    """
    found = repeated_llm_requests(model, goal, trace)
    asked = sorted((turn, serials) for (g, turn), serials in model.requests.items() if g == goal)
    for turn, serials in asked:
        live = [serial for serial in serials if model.callers[serial] not in lost]
        if len(live) > 1 and not any(line.startswith(f"turn {turn}:") for line in found):
            callers = [model.callers[serial] for serial in live]
            found.append(f"turn {turn}: asked as {live} by {callers}")
    return found


def wait_for(predicate: Any, timeout_s: float, what: str) -> None:
    """Poll `predicate` until it holds (bounded generously: a loaded machine is slow)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s:g} s")
        time.sleep(0.05)


@contextlib.contextmanager
def busy_cpus(count: int) -> Iterator[None]:
    """`count` processes that each keep a core busy while the block runs: a loaded machine."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(30)
