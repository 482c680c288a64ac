"""Reading tool calls a model wrote as text: only text that is nothing but calls to offered tools."""

import pytest

from agentkit.adapters.llm.text_tool_calls import could_be_text_tool_calls, find_text_tool_calls

TOOLS = {"calculator", "sql_readonly"}
CALC = '{"name": "calculator", "arguments": {"expression": "17 * 23"}}'


@pytest.mark.parametrize(
    "text",
    [
        CALC,
        f"  {CALC}\n",
        f"```json\n{CALC}\n```",
        f"```\n{CALC}\n```",
        f"<tool_call>\n{CALC}\n</tool_call>",
        '{"name": "calculator", "parameters": {"expression": "17 * 23"}}',  # Llama 3 says "parameters"
        '{"type": "function", "name": "calculator", "parameters": {"expression": "17 * 23"}}',
    ],
)
def test_the_formats_small_models_write_are_read_as_one_call(text: str) -> None:
    assert find_text_tool_calls(text, TOOLS) == [("calculator", {"expression": "17 * 23"})]


def test_several_calls_keep_their_order() -> None:
    sql = '{"name": "sql_readonly", "arguments": {"query": "SELECT 1"}}'
    assert find_text_tool_calls(f"[{CALC}, {sql}]", TOOLS) == [
        ("calculator", {"expression": "17 * 23"}),
        ("sql_readonly", {"query": "SELECT 1"}),
    ]
    tagged = f"<tool_call>{CALC}</tool_call>\n<tool_call>{sql}</tool_call>"
    assert [name for name, _ in find_text_tool_calls(tagged, TOOLS)] == ["calculator", "sql_readonly"]


def test_arguments_given_as_a_json_string_are_passed_on_as_text_for_the_adapter_to_parse() -> None:
    text = '{"name": "calculator", "arguments": "{\\"expression\\": \\"1+1\\"}"}'
    assert find_text_tool_calls(text, TOOLS) == [("calculator", '{"expression": "1+1"}')]


def test_a_call_without_arguments_has_empty_ones() -> None:
    assert find_text_tool_calls('{"name": "calculator"}', TOOLS) == [("calculator", {})]


def test_raw_newlines_inside_strings_are_read() -> None:
    text = '{"name": "sql_readonly", "arguments": {"query": "SELECT 1\nFROM t"}}'
    assert find_text_tool_calls(text, TOOLS) == [("sql_readonly", {"query": "SELECT 1\nFROM t"})]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "17 * 23 = 391",
        f"I will call {CALC}",  # prose around the JSON: an answer that mentions a call
        f"{CALC}\nThat gives the result.",
        f"Here it is: <tool_call>{CALC}</tool_call>",
        '{"name": "Alice", "arguments": {"age": 3}}',  # a JSON answer whose name is no tool
        '{"name": "calculator", "arguments": {"expression": "1"}, "result": 1}',  # other keys
        '{"name": "calculator", "arguments": {}, "parameters": {}}',
        '{"name": "calculator", "arguments": [1, 2]}',
        '{"type": "custom", "name": "calculator"}',
        f"[{CALC}, 42]",
        '{"name": "calculator", "arguments": {"expression": "1"',  # cut off
        '{"city": "Paris", "country": "France"}',
        "functions.calculator:",  # llama-cpp-python's chatml-function-calling prefix, without a call
    ],
)
def test_anything_else_stays_an_answer(text: str) -> None:
    assert find_text_tool_calls(text, TOOLS) == []


def test_a_call_to_a_tool_that_was_not_offered_is_an_answer() -> None:
    assert find_text_tool_calls(CALC, {"sql_readonly"}) == []


@pytest.mark.parametrize(
    ("start", "could_be"),
    [
        ("", True),
        ("  \n", True),
        ('{"na', True),
        (" [", True),
        ("`", True),
        ("```js", True),
        ("<tool", True),
        ("<tool_call>\n{", True),
        ("The", False),
        ("`x`", False),
        ("<b>", False),
        ("<tool_calls>", False),
    ],
)
def test_a_stream_holds_text_back_only_while_its_start_could_be_calls(start: str, could_be: bool) -> None:
    assert could_be_text_tool_calls(start) is could_be
