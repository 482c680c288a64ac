"""Agents that call agents, for tests: a model scripted per goal, so parent and child runs each get their own script."""

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentkit.application.errors import LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

TREE_AGENTS = """
[agents.triage]
description = "Splits a question and asks the experts."
instructions = "You are triage: ask the experts, then answer."
tools = []
agents = ["math", "writer"]

[agents.math]
description = "Computes exactly."
instructions = "You are math."
tools = ["add"]
output_schema = { type = "object", properties = { value = { type = "integer" } }, required = ["value"] }

[agents.writer]
description = "Writes one sentence."
instructions = "You are writer."
tools = []
agents = ["triage"]
"""


def agents_file(tmp_path: Path, text: str = TREE_AGENTS) -> str:
    """An agents file with `text`."""
    path = tmp_path / "agents.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def calls(*made: tuple[str, str, dict[str, Any]], tokens: int = 10) -> LLMResponse:
    """A turn that makes these calls (name, call id, arguments), at once."""
    return LLMResponse(
        tool_calls=tuple(ToolCall(id=ToolCallId(call_id), name=name, arguments=args) for name, call_id, args in made),
        usage=Usage(input_tokens=tokens, output_tokens=2),
    )


def answer(text: str, *, tokens: int = 10) -> LLMResponse:
    """A turn that answers."""
    return LLMResponse(text=text, usage=Usage(input_tokens=tokens, output_tokens=2))


class GoalScriptedLLM(LLMClient):
    """Each run gets the script of its goal (the conversation's first user message), turn by turn.

    Runs of a tree run at once, in any order: a script per goal keeps each run's answers its own.
    `delay_s` holds each answer (a child's work, for the benchmark); `asked` counts every call per goal,
    so a test sees that no turn was asked for twice.
    """

    def __init__(
        self,
        scripts: Mapping[str, Sequence[LLMResponse]],
        *,
        delay_s: Mapping[str, float] | None = None,
        gated: Sequence[str] = (),
    ):
        self._scripts = {goal: list(script) for goal, script in scripts.items()}
        self._delay = dict(delay_s or {})
        # a gated goal's calls wait for `gates[goal]`; `entered[goal]` is set once one is waiting
        self.gates = {goal: asyncio.Event() for goal in gated}
        self.entered = {goal: asyncio.Event() for goal in gated}
        self.asked: dict[str, int] = {}
        self.requests: list[tuple[str, list[Message], list[ToolSchema]]] = []

    @property
    def provider(self) -> str:
        """`scripted`."""
        return "scripted"

    @property
    def model(self) -> str:
        """`script`."""
        return "script"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The next response of the goal's script."""
        goal = next((m.content for m in messages if m.role == "user"), "") or ""
        self.requests.append((goal, list(messages), list(tools)))
        turn = sum(1 for m in messages if m.role == "assistant")
        self.asked[goal] = self.asked.get(goal, 0) + 1
        script = self._scripts.get(goal)
        if script is None or turn >= len(script):
            raise LLMRequestError(f"no scripted turn {turn} for the goal {goal!r}")
        delay = self._delay.get(goal, 0.0)
        if delay:
            await asyncio.sleep(delay)
        if goal in self.gates:
            self.entered[goal].set()
            await self.gates[goal].wait()
        return script[turn]
