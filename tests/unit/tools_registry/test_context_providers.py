"""Typed hidden context: a tool asks for a ToolContext subclass, a context provider supplies it."""

import importlib

import pytest

from agentkit.application.errors import ToolRegistrationError
from agentkit.application.tools import ToolContext, ToolRegistry, context_provider, extend, tool
from agentkit.application.tools.discovery import context_providers_in, tools_in
from agentkit.domain.ids import OwnerId, RunId, ToolCallId
from agentkit.domain.messages import ToolCall
from tests import context_tools
from tests.context_tools import ActionContext, action_context, save_paper

BASE = ToolContext(run_id=RunId("run-7"), owner=OwnerId("owner-1"))


async def test_a_provided_context_reaches_the_tool_and_stays_out_of_its_schema() -> None:
    registry = ToolRegistry([save_paper], context_providers=[action_context])
    call = ToolCall(id=ToolCallId("c1"), name="save_paper", arguments={"title": "On Loops", "content": "abc"})

    result = await registry.execute(call, BASE)

    assert result.ok, result.error
    assert result.output == (
        "saved 'On Loops' (3 chars) to postgresql://papers@127.0.0.1:5432/papers for run run-7 with key #6907c4e8"
    )
    assert set(save_paper.schema.parameters["properties"]) == {"title", "content"}


def test_a_tool_whose_context_nobody_provides_is_refused_at_registration() -> None:
    with pytest.raises(
        ToolRegistrationError,
        match="asks for ActionContext, which this runtime cannot supply; register a context provider for it",
    ):
        ToolRegistry([save_paper])


def test_a_provider_must_say_which_context_it_supplies() -> None:
    def untyped(base: ToolContext):  # type: ignore[no-untyped-def]
        return base

    def base_only(base: ToolContext) -> ToolContext:
        return base

    for build in (untyped, base_only):
        with pytest.raises(ToolRegistrationError, match="must be annotated to return a ToolContext subclass"):
            context_provider(build)


def test_two_providers_of_one_context_are_refused() -> None:
    @context_provider
    def another(base: ToolContext) -> ActionContext:
        return extend(base, ActionContext, database_url="x", api_key="y")

    with pytest.raises(ToolRegistrationError, match="two context providers supply ActionContext"):
        ToolRegistry([save_paper], context_providers=[action_context, another])


def test_a_tool_module_offers_its_tools_and_its_context_providers() -> None:
    module = importlib.import_module("tests.context_tools")

    assert tools_in(module) == [save_paper]
    assert context_providers_in(module) == [action_context]
    assert context_providers_in(context_tools.save_paper) == []


def test_a_narrower_provided_context_serves_a_tool_asking_for_its_base() -> None:
    @tool
    def whoami(ctx: ToolContext) -> str:
        return ctx.run_id

    registry = ToolRegistry([whoami, save_paper], context_providers=[action_context])
    assert registry.names() == ["whoami", "save_paper"]
