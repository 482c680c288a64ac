"""What the `Agent` benchmarks share: one library `Agent`, a cycling scripted LLM and a no-op tool.

Every run the agent makes is alike: k turns that each ask for one call of the async no-op tool,
then a turn that answers. One `Agent` serves every run, as one in a long-lived process would.
"""

from collections.abc import Sequence

from agentkit import Agent, tool
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

GOAL = "Call the no-op tool until told otherwise."
ANSWER = "done"


@tool
async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter, so that no two calls in a run are identical.
    """
    return "ok"


class CyclingLLM(LLMClient):
    """Answers every run alike: `tool_turns` turns asking for one `noop` call each, then the answer.

    One instance serves runs one after another, so a counter says which turn it is. Not
    `ScriptedLLMClient(per_conversation=True)`: that one counts the run's turns from its messages
    on every call, which would add a walk over the conversation to AgentKit's cost per step and to
    none of the peers' (their fake models count too).
    """

    def __init__(self, tool_turns: int) -> None:
        usage = Usage(input_tokens=10, output_tokens=5)
        calls = [
            LLMResponse(
                tool_calls=(ToolCall(id=ToolCallId(f"c{i}"), name="noop", arguments={"i": i}),),
                usage=usage,
                finish_reason=FinishReason.TOOL_CALLS,
            )
            for i in range(tool_turns)
        ]
        self._script = [*calls, LLMResponse(text=ANSWER, usage=usage)]
        self._next = 0

    @property
    def provider(self) -> str:
        """The bench's own."""
        return "bench"

    @property
    def model(self) -> str:
        """The bench's own."""
        return "cycling"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The next turn of the script, from its start again after the answer."""
        response = self._script[self._next]
        self._next = (self._next + 1) % len(self._script)
        return response


def agentkit_agent(tool_turns: int) -> Agent:
    """One `Agent` for runs of `tool_turns` tool turns and an answer."""
    return Agent(llm=CyclingLLM(tool_turns), tools=[noop], max_steps=tool_turns + 1)


async def agentkit_run(agent: Agent, tool_turns: int) -> None:
    """One run, checked: it succeeded, with every tool call and the answer in its trace.

    Raises:
        AssertionError: the run did not go as scripted.
    """
    result = await agent.run(GOAL)
    assert result.ok, result.run
    assert result.answer == ANSWER, result.answer
    assert len(result.steps) == 2 * tool_turns + 1, len(result.steps)
