"""LangGraph doing the runs `agent_harness` makes AgentKit do (importable only where it is installed).

A ReAct agent from `langgraph.prebuilt.create_react_agent` over a fake chat model, with the same
async no-op as a langchain-core `@tool`. LangGraph 1.x marks `create_react_agent` deprecated in
favour of `langchain.agents.create_agent`, which lives in the full `langchain` package; the graph
it builds is the same model node and tool node, so the bench keeps to langgraph and langchain-core.
"""

import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10
from pydantic import PrivateAttr

from agent_harness import ANSWER, GOAL

NAME = "LangGraph"


async def noop(i: int) -> str:
    """Do nothing.

    Args:
        i: A counter, so that no two calls in a run are identical.
    """
    return "ok"


class CyclingChatModel(BaseChatModel):
    """`tool_turns` turns asking for one `noop` call each, then the answer, counted as `CyclingLLM` does."""

    tool_turns: int
    _turn: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "cycling"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Itself: the script knows its tool."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("the bench runs the graph with ainvoke")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        i, self._turn = self._turn, (self._turn + 1) % (self.tool_turns + 1)
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        if i == self.tool_turns:
            message = AIMessage(content=ANSWER, usage_metadata=usage)
        else:
            call = {"name": "noop", "args": {"i": i}, "id": f"c{i}"}
            message = AIMessage(content="", tool_calls=[call], usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def build(tool_turns: int) -> Callable[[], Awaitable[None]]:
    """One LangGraph ReAct agent and a function making one checked run with it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        graph = create_react_agent(CyclingChatModel(tool_turns=tool_turns), [tool(noop)])
    # each turn is two graph steps (the model node, then the tool node); the default limit is 25
    config: RunnableConfig = {"recursion_limit": 2 * tool_turns + 10}

    async def run() -> None:
        state = await graph.ainvoke({"messages": [("user", GOAL)]}, config)
        messages = state["messages"]
        assert messages[-1].content == ANSWER, messages[-1]
        assert len(messages) == 2 * tool_turns + 2, len(messages)

    return run
