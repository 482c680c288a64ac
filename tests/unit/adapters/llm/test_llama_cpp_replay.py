"""Whole agent runs against llama-cpp-python 0.3.36, replayed from its recorded answers.

The loop, the OpenAI adapter, the `openai` SDK, the retry policy and the built-in tools are all
real; only the HTTP transport is a recording. Where AgentKit's requests are compared with the
recorded ones, the recorded request is the one the real server accepted (a test proxy had added
`tool_choice: "auto"` and `content: ""` to what AgentKit sent then), so equality means AgentKit
now sends, byte for byte in meaning, what made the server work. The last tests read the recorded
Qwen answers (tool calls written as text) through the adapter alone.
"""

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agentkit.domain.messages import FinishReason, Message
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from agentkit.domain.tools import ToolSchema
from tests.fixtures.llm.agent_run import RECORDED_SETTINGS, ReplayedAgent
from tests.fixtures.llm.recorded import RecordedExchange, recorded
from tests.fixtures.llm.replay import ReplayTransport, openai_client

AgentFactory = Callable[..., ReplayedAgent]


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[AgentFactory]:
    """Builds replayed agents in a scratch folder and closes them after the test."""
    made: list[ReplayedAgent] = []

    def make(exchanges: list[RecordedExchange], **settings: Any) -> ReplayedAgent:
        built = ReplayedAgent([exchange.reply() for exchange in exchanges], tmp_path, **settings)
        made.append(built)
        return built

    yield make
    for built in made:
        await built.aclose()


def goal_of(exchange: RecordedExchange) -> str:
    """The run's goal: the first user message of a recorded request."""
    return str(next(m["content"] for m in exchange.request["messages"] if m["role"] == "user"))


def tool_call_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]


async def test_a_tool_run_sends_what_the_server_accepted_until_the_context_window_is_full(
    agent: AgentFactory,
) -> None:
    exchanges = recorded("calculator_until_context_overflow")  # five tool calls, then HTTP 400
    replayed = agent(exchanges)

    run = await replayed.run(goal_of(exchanges[0]))

    sent = replayed.transport.bodies()
    assert len(sent) == len(exchanges)  # the 400 was not retried
    for body, exchange in zip(sent[:5], exchanges[:5], strict=True):
        assert body == exchange.request
    for body in sent:
        assert body["tool_choice"] == "auto"
        assert all(message["content"] == "" for message in tool_call_messages(body))
    assert run.status is RunStatus.FAILED
    assert run.failure_reason is not None
    assert run.failure_reason.startswith(
        "the LLM call failed: the OpenAI-compatible server at http://127.0.0.1:8000/v1 rejected the request "
        "(HTTP 400): This model's maximum context length is 2048 tokens."
    )
    assert "no longer fits the model's context window" in run.failure_reason
    assert "\n" not in run.failure_reason
    steps = await replayed.steps(run)
    assert [type(step).__name__ for step in steps] == ["LLMStep", "ToolStep"] * 5 + ["LLMStep"]
    assert next(step.result.output for step in steps if isinstance(step, ToolStep)) == "391"
    last = steps[-1]
    assert isinstance(last, LLMStep)
    assert last.error is not None
    assert "maximum context length is 2048 tokens" in last.error


async def test_raw_newlines_in_arguments_are_read_and_sent_back_as_strict_json(agent: AgentFactory) -> None:
    exchanges = recorded("calculator_until_context_overflow")
    raw = exchanges[4].answer["tool_calls"][0]["function"]["arguments"]
    assert "\n" in raw  # the recorded sql_readonly call: raw newlines inside the query string
    replayed = agent(exchanges)

    run = await replayed.run(goal_of(exchanges[0]))

    tool_steps = [step for step in await replayed.steps(run) if isinstance(step, ToolStep)]
    assert tool_steps[-1].arguments == json.loads(raw, strict=False)
    # the tool ran (its own error, from PostgreSQL's parser) instead of an "invalid JSON" error
    assert tool_steps[-1].result.error is not None
    assert tool_steps[-1].result.error.startswith("not valid SQL")
    echoed = tool_call_messages(replayed.transport.bodies()[5])[-1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(echoed) == json.loads(raw, strict=False)  # strict JSON now: a vLLM history parses it
    # what the recording sent then: the raw text, and the model was told its JSON was invalid
    recorded_messages = exchanges[5].request["messages"]
    assert tool_call_messages(exchanges[5].request)[-1]["tool_calls"][0]["function"]["arguments"] == raw
    assert "not a valid JSON object" in recorded_messages[-1]["content"]
    assert replayed.transport.bodies()[5]["messages"][:-2] == recorded_messages[:-2]


async def test_a_run_with_an_output_schema_ends_with_the_final_result_call(agent: AgentFactory) -> None:
    exchanges = recorded("structured_output")  # four failing tool calls, then final_result
    replayed = agent(exchanges)
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }

    run = await replayed.run(goal_of(exchanges[0]), output_schema=schema)

    assert run.status is RunStatus.SUCCEEDED
    assert run.output == {"city": "Paris", "country": "France"}
    assert replayed.transport.bodies() == [exchange.request for exchange in exchanges]


async def test_without_content_the_template_fails_with_500_and_the_run_names_the_servers_message(
    agent: AgentFactory,
) -> None:
    first, failed = recorded("missing_content_500")
    assert "content" not in tool_call_messages(failed.request)[0]
    # LLM_TOOL_CALL_CONTENT=omit sends what AgentKit sent before; the server answered 500, four times
    replayed = agent([first, failed, failed, failed, failed], llm_tool_call_content="omit")

    run = await replayed.run(goal_of(first))

    sent = replayed.transport.bodies()
    assert sent[:2] == [first.request, failed.request]
    assert sent[1:] == [failed.request] * 4  # a 5xx is retried, as the policy says
    assert len(replayed.sleeps.waits) == 3
    assert run.status is RunStatus.FAILED
    assert run.failure_reason == (
        "the LLM call failed: openai stayed unavailable after 4 attempts: the OpenAI-compatible server at "
        "http://127.0.0.1:8000/v1 answered HTTP 500: 'dict object' has no attribute 'content'"
    )


async def test_the_default_puts_content_on_the_message_that_got_the_500(agent: AgentFactory) -> None:
    first, failed = recorded("missing_content_500")
    replayed = agent([first, failed], max_retries=0)

    await replayed.run(goal_of(first))

    expected = json.loads(json.dumps(failed.request))
    tool_call_messages(expected)[0]["content"] = ""
    assert replayed.transport.bodies()[1] == expected


async def test_an_empty_text_answer_ends_the_run_with_the_clear_reason(agent: AgentFactory) -> None:
    (exchange,) = recorded("empty_text_answer")  # with "auto", the text came back as ""
    assert exchange.answer["content"] == ""
    replayed = agent([exchange])

    run = await replayed.run(goal_of(exchange))

    assert replayed.transport.bodies() == [exchange.request]
    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "the model returned neither an answer nor a tool call"
    (step,) = await replayed.steps(run)
    assert isinstance(step, LLMStep)
    assert (step.text, step.tool_calls, step.usage.output_tokens) == ("", (), 9)


async def test_a_qwen_tool_call_written_as_text_runs_the_tool_when_text_tool_calls_are_on(
    agent: AgentFactory,
) -> None:
    qwen = recorded("qwen_text_tool_calls")[0]  # the model's own template: the call is JSON in content
    answer = json.loads(json.dumps(recorded("empty_text_answer")[0].response))
    answer["choices"][0]["message"]["content"] = "17 * 23 = 391"  # not recorded: the turn after is made up
    replayed = agent([qwen, RecordedExchange(n=0, status=200, request={}, response=answer)], llm_text_tool_calls=True)

    run = await replayed.run(goal_of(qwen))

    assert (run.status, run.answer) == (RunStatus.SUCCEEDED, "17 * 23 = 391")
    first, second = replayed.transport.bodies()
    assert first == qwen.request | {"tool_choice": "auto"}  # the recording had no tool_choice
    call_id = f"call_{qwen.response['id']}_0"
    assert second["messages"][-2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "calculator", "arguments": '{"expression": "(17 * 23)"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "391"},
    ]


@pytest.mark.parametrize("exchange", recorded("qwen_text_tool_calls"), ids=lambda exchange: f"n{exchange.n}")
async def test_every_recorded_qwen_text_call_is_read_as_the_call_it_spells(exchange: RecordedExchange) -> None:
    written = json.loads(exchange.answer["content"])
    transport = ReplayTransport([exchange.reply()])
    client = openai_client(transport, **(RECORDED_SETTINGS | {"llm_text_tool_calls": True}))
    response = await client.chat(_goal_messages(exchange), _tools_of(exchange))
    await client.aclose()

    (call,) = response.tool_calls
    assert (call.name, call.arguments, call.arguments_error) == (written["name"], written["arguments"], None)
    assert (response.text, response.finish_reason) == ("", FinishReason.TOOL_CALLS)


async def test_a_bare_function_prefix_stays_text_even_with_text_tool_calls_on() -> None:
    (exchange,) = recorded("function_name_as_text")
    transport = ReplayTransport([exchange.reply()])
    client = openai_client(transport, **(RECORDED_SETTINGS | {"llm_text_tool_calls": True}))
    response = await client.chat(_goal_messages(exchange), _tools_of(exchange))
    await client.aclose()

    assert (response.text, response.tool_calls) == ("functions.calculator:", ())


def _goal_messages(exchange: RecordedExchange) -> list[Message]:
    return [Message(role=m["role"], content=m["content"]) for m in exchange.request["messages"]]


def _tools_of(exchange: RecordedExchange) -> list[ToolSchema]:
    functions = (tool["function"] for tool in exchange.request["tools"])
    return [ToolSchema(name=f["name"], description=f["description"], parameters=f["parameters"]) for f in functions]
