"""The `demo` provider: a rule-based stand-in for a model, so a fresh install answers its own demo questions.

It is not a language model and does not pretend to be one beyond the protocol: it reads the goal
and the tool results of the conversation and plays the turns a model would, with the built-in tools:

- "How much did our top customer spend, and what is 15% of that?": `sql_readonly` on the seeded
  demo database, then `calculator` on the total it found, then the answer from both results;
- a goal holding arithmetic ("What is (17 + 25) * 3, and 15% of it?"): `calculator`, then the
  percentage of the result if one was asked for, then the answer;
- anything else: an answer that says what it can do and how to configure a real provider.

Every number in its answers comes from a tool result, never from the rules themselves, so the
trace shows a real run. Token counts are estimates (four characters a token). It streams as a
model does: its text word by word, each call's arguments in pieces (see `fragments`).
"""

import re
from collections.abc import AsyncIterator, Sequence
from decimal import Decimal, InvalidOperation

import msgspec

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.fragments import fragments
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMDelta, LLMResponse, Message, ToolCall, Usage
from agentkit.domain.tools import ToolSchema

TOP_CUSTOMER_SQL = (
    "SELECT c.name, sum(i.quantity * i.unit_price) AS total_spent FROM customers c "
    "JOIN orders o ON o.customer_id = c.id JOIN order_items i ON i.order_id = o.id "
    "WHERE o.status <> 'cancelled' GROUP BY c.id, c.name ORDER BY total_spent DESC LIMIT 1"
)
HELP = (
    "I am AgentKit's demo model, a set of rules rather than a language model. I can answer questions about "
    'the demo shop\'s top customer ("How much did our top customer spend, and what is 15% of that?") and '
    'arithmetic ("What is (17 + 25) * 3?"). For anything else, configure a real provider (in .env or the '
    "environment):\n"
    "- OpenAI: LLM_PROVIDER=openai and OPENAI_API_KEY\n"
    "- Gemini: LLM_PROVIDER=gemini and GEMINI_API_KEY\n"
    "- a local OpenAI-compatible server (vLLM, Ollama, llama.cpp): LLM_PROVIDER=openai, LLM_BASE_URL, "
    "LLM_MODEL, and any OPENAI_API_KEY"
)
_TOP_CUSTOMER = re.compile(r"\b(top|best|biggest|largest)\s+customer|customer\b.*\b(spent|spend|most)\b", re.I)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
# Runs of digits, operators and brackets; one that holds an operator between two operands is arithmetic.
_CANDIDATE = re.compile(r"[\d\s.+\-*/()]+")
_OPERATION = re.compile(r"\d\s*\)*\s*[+\-*/]\s*\(*\s*\d")


class _ToolOutcome(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    text: str

    @property
    def failed(self) -> bool:
        return self.text.startswith("ERROR:")


class DemoLLMClient(LLMClient):
    """Plays a model's turns for AgentKit's demo questions with the built-in tools (see the module docstring)."""

    @property
    def provider(self) -> str:
        """Always `demo`."""
        return "demo"

    @property
    def model(self) -> str:
        """The name it reports."""
        return "agentkit-demo"

    async def chat(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        """The next turn: a tool call, or the answer built from the tool results so far."""
        goal, outcomes = _goal_and_outcomes(messages)
        offered = {schema.name for schema in tools}
        if _TOP_CUSTOMER.search(goal):
            response = _top_customer(goal, outcomes, offered)
        elif (expression := _expression(goal)) is not None:
            response = _arithmetic(goal, expression, outcomes, offered)
        else:
            response = _answer(HELP)
        prompt_chars = sum(len(message.content) for message in messages)
        usage = Usage(input_tokens=prompt_chars // 4 + 1, output_tokens=len(response.text) // 4 + 1)
        # call ids unique within the conversation, as a provider's are
        calls = tuple(
            msgspec.structs.replace(call, id=ToolCallId(f"demo-call-{len(outcomes) + n}"))
            for n, call in enumerate(response.tool_calls, start=1)
        )
        return msgspec.structs.replace(response, usage=usage, tool_calls=calls)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> AsyncIterator[LLMDelta | LLMResponse]:
        """The turn `chat` gives, in fragments, then whole."""
        response = await self.chat(messages, tools)
        for fragment in fragments(response):
            yield fragment
        yield response


def _goal_and_outcomes(messages: Sequence[Message]) -> tuple[str, list[_ToolOutcome]]:
    """The newest user message (the goal) and the tool results that came after it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            later = messages[index + 1 :]
            return messages[index].content, [
                _ToolOutcome(name=m.name or "", text=m.content) for m in later if m.role == "tool"
            ]
    return "", []


def _top_customer(goal: str, outcomes: list[_ToolOutcome], offered: set[str]) -> LLMResponse:
    if "sql_readonly" not in offered:
        return _answer(
            "I would query the demo shop database for that, but the sql_readonly tool is not available here: "
            "it needs PostgreSQL with the demo database (`make run` sets both up)."
        )
    queried = _last(outcomes, "sql_readonly")
    if queried is None:
        return _call(
            "I'll find the customer with the highest spend (cancelled orders excluded).",
            "sql_readonly",
            {"query": TOP_CUSTOMER_SQL},
        )
    if queried.failed:
        return _answer(f"The query failed, so I cannot say: {queried.text.removeprefix('ERROR: ')}")
    found = _name_and_total(queried.text)
    if found is None:
        return _answer(f"The query returned no customer I could read:\n{queried.text}")
    name, total = found
    percent = _PERCENT.search(goal)
    summary = f"Our top customer is {name}, who spent ${total:,.2f} (cancelled orders excluded)."
    if percent is None:
        return _answer(summary)
    share = Decimal(percent.group(1)) / 100
    computed = _last(outcomes, "calculator")
    if computed is None:
        return _call(
            f"{name} spent {total}. Now {percent.group(0)} of that.", "calculator", {"expression": f"{total} * {share}"}
        )
    return _answer(f"{summary} {percent.group(0)} of that is {_money(computed.text)}.")


def _arithmetic(goal: str, expression: str, outcomes: list[_ToolOutcome], offered: set[str]) -> LLMResponse:
    if "calculator" not in offered:
        return _answer("I would use the calculator for that, but it is not among the tools offered.")
    results = [outcome for outcome in outcomes if outcome.name == "calculator"]
    if not results:
        return _call("I'll compute it with the calculator.", "calculator", {"expression": expression})
    first = results[0]
    if first.failed:
        return _answer(f"The calculator could not compute {expression}: {first.text.removeprefix('ERROR: ')}")
    percent = _PERCENT.search(goal.replace(expression, ""))
    if percent is None:
        return _answer(f"{expression} = {first.text}.")
    if len(results) == 1:
        share = Decimal(percent.group(1)) / 100
        return _call(
            f"Now {percent.group(0)} of {first.text}.", "calculator", {"expression": f"{first.text} * {share}"}
        )
    return _answer(f"{expression} = {first.text}, and {percent.group(0)} of {first.text} is {results[1].text}.")


def _expression(goal: str) -> str | None:
    for match in _CANDIDATE.finditer(goal):
        text = match.group(0).strip()
        if _OPERATION.search(text):
            return text
    return None


def _name_and_total(table: str) -> tuple[str, Decimal] | None:
    """The first data row of a `name | total` table as sql_readonly renders it."""
    lines = table.splitlines()
    if len(lines) < 3 or "|" not in lines[2]:
        return None
    name, _, total = (cell.strip() for cell in lines[2].rpartition("|"))
    try:
        return name, Decimal(total)
    except InvalidOperation:
        return None


def _money(text: str) -> str:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    exact = f" (exactly {text})" if value != round(value, 2) else ""
    return f"${round(value, 2):,.2f}{exact}"


def _last(outcomes: list[_ToolOutcome], name: str) -> _ToolOutcome | None:
    return next((outcome for outcome in reversed(outcomes) if outcome.name == name), None)


def _call(text: str, name: str, arguments: dict[str, str]) -> LLMResponse:
    call = ToolCall(id=ToolCallId("demo-call"), name=name, arguments=arguments)
    return LLMResponse(text=text, tool_calls=(call,), finish_reason=FinishReason.TOOL_CALLS)


def _answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, finish_reason=FinishReason.STOP)


def build_demo_client(config: LLMConfig) -> LLMClient:
    """The `demo` provider's factory (entry point `agentkit.llm_providers`: demo); it needs no configuration."""
    return DemoLLMClient()
