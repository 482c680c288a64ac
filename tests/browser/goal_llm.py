"""A test model whose every run plays the script its goal names, so runs of one server do not share a script.

The goal's first word picks the tool the model calls on its first turn (`add`, `hostile`, `slow`,
`delete`, `ask`, `stream`; `delegate` asks the `helper` agent, whose child run is `slow`; `pair`
calls `nap` twice in one turn, and the calls run at once); its
second turn answers with what the tool returned (`stream`: writes its answer in two fragments,
holding between them until the test lets it go on). Turns are counted from the conversation itself,
so a resumed run (after an approval) picks up where it was.
"""

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.tools import tool
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, Message, TextDelta, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
# The `slow` tool holds until a test sets this (a thread: sync tools run in one).
RELEASE = threading.Event()
# A `stream` run's answer holds after its first fragment until a test sets this.
WRITE = threading.Event()
STREAMED = ("Writing slowly", ", then all at once.")
_FIRST_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "add": ("add", {"a": 2, "b": 3}),
    "hostile": ("hostile", {}),
    "slow": ("slow", {}),
    "delete": ("delete_file", {"path": "notes.txt"}),
    "ask": ("ask_user", {"question": "which files?"}),  # a client tool the run names
    "stream": ("slow", {}),  # the answer comes after the tool, when the page already follows the run
    "delegate": ("ask_helper", {"task": "slow work for the lead"}),  # a child run of the `helper` agent
}
# Agents that call agents (conftest's AGENTS_FILE): `lead` may only ask `helper`, which may call `slow`.
TREE_AGENTS = """
[agents.lead]
description = "Hands its work to the helper."
instructions = "You are lead."
tools = []
agents = ["helper"]

[agents.helper]
description = "Does slow work."
instructions = "You are helper."
tools = ["slow"]
"""


@tool
def hostile() -> str:
    """Return markup that would run if a page wrote it as HTML."""
    return HOSTILE


@tool(timeout=120)
def slow() -> str:
    """Wait until the test lets it finish."""
    RELEASE.wait(timeout=110)
    return "released"


@tool
def nap(seconds: float) -> str:
    """Sleep a while (two of one turn run at the same time).

    Args:
        seconds: How long.
    """
    time.sleep(seconds)
    return f"slept {seconds}"


@tool
def delete_file(path: str) -> str:
    """Delete a file (asks a person first).

    Args:
        path: The file.
    """
    return f"deleted {path}"


class GoalScriptedLLM(LLMClient):
    """Plays the script the goal's first word names: call one tool, then answer with its result."""

    @property
    def provider(self) -> str:
        """A test provider."""
        return "scripted"

    @property
    def model(self) -> str:
        """The model every step names."""
        return "goal-script-1"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The first turn calls the goal's tool, the next answers with the tool's result."""
        goal = next(m.content for m in messages if m.role == "user")
        turns = sum(1 for m in messages if m.role == "assistant")
        first = _FIRST_CALLS.get(goal.split()[0].lower()) if goal.split() else None
        usage = Usage(input_tokens=40 + 10 * len(messages), output_tokens=12)
        if goal.lower().startswith("pair") and turns == 0:
            calls = tuple(
                ToolCall(id=ToolCallId(f"call-nap-{n}"), name="nap", arguments={"seconds": 0.4}) for n in (1, 2)
            )
            return LLMResponse(
                text="Two at once.", tool_calls=calls, usage=usage, finish_reason=FinishReason.TOOL_CALLS
            )
        if first is not None and turns == 0:
            name, arguments = first
            return LLMResponse(
                text=f"I will call {name}.",
                tool_calls=(ToolCall(id=ToolCallId(f"call-{name}"), name=name, arguments=arguments),),
                usage=usage,
                finish_reason=FinishReason.TOOL_CALLS,
            )
        if goal.lower().startswith("stream"):
            return LLMResponse(text="".join(STREAMED), usage=usage, finish_reason=FinishReason.STOP)
        result = next((m.content for m in reversed(messages) if m.role == "tool"), "nothing to do")
        return LLMResponse(text=f"Done: {result}", usage=usage, finish_reason=FinishReason.STOP)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """As `chat`; a `stream` run's answer comes in two fragments, with a wait on WRITE between them."""
        response = await self.chat(messages, tools)
        if response.tool_calls or response.text != "".join(STREAMED):
            async for item in super().stream(messages, tools):
                yield item
            return
        yield TextDelta(text=STREAMED[0])
        await asyncio.to_thread(WRITE.wait, 110)
        yield TextDelta(text=STREAMED[1])
        yield response
