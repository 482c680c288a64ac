"""Pydantic AI doing the runs `agent_harness` makes AgentKit do (importable only where it is installed).

`Agent(FunctionModel(...))` with the same async no-op as a `tool_plain` tool. The model function
counts turns the way `CyclingLLM` does and reports the same token usage, so Pydantic AI skips its
estimate of the tokens (which walks the conversation, a cost no real provider's model has).
"""

from collections.abc import Awaitable, Callable

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

from agent_harness import ANSWER, GOAL

NAME = "Pydantic AI"


async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter, so that no two calls in a run are identical.
    """
    return "ok"


def build(tool_turns: int) -> Callable[[], Awaitable[None]]:
    """One Pydantic AI agent and a function making one checked run with it."""
    turn = 0

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal turn
        i, turn = turn, (turn + 1) % (tool_turns + 1)
        # a new response each call: the model stamps its name and the usage on it
        usage = RequestUsage(input_tokens=10, output_tokens=5)
        if i == tool_turns:
            return ModelResponse(parts=[TextPart(ANSWER)], usage=usage)
        return ModelResponse(parts=[ToolCallPart("noop", {"i": i}, tool_call_id=f"c{i}")], usage=usage)

    agent = Agent(FunctionModel(model))
    agent.tool_plain(noop)
    # the default limit is 50 requests a run; a run here makes one per turn
    limits = UsageLimits(request_limit=tool_turns + 1)

    async def run() -> None:
        result = await agent.run(GOAL, usage_limits=limits)
        assert result.output == ANSWER, result.output
        usage = result.usage
        assert (usage.requests, usage.tool_calls) == (tool_turns + 1, tool_turns), usage

    return run
