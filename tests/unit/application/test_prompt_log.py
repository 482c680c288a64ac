"""PromptLog: each message stored once per run, each LLM call a reference to the prefix it sent; the stored
form (digests, redaction) the pipeline's writer makes of what was sent."""

from datetime import UTC, datetime

import msgspec

from agentkit.application.agent.prompts import PromptLog
from agentkit.application.pipeline.entries import SentPrompt
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.pipeline.stored import stored_delta, stored_step
from agentkit.domain.ids import RunId, ToolCallId
from agentkit.domain.messages import Message, ToolCall
from agentkit.domain.steps import LLMStep, PromptDelta, ToolStep, digest_of
from agentkit.domain.tools import ToolResult, ToolSchema

T0 = datetime(2026, 12, 1, tzinfo=UTC)
ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object", "properties": {}})
SYSTEM = Message(role="system", content="be brief")
GOAL = Message(role="user", content="2+3")
CALL = Message(
    role="assistant", tool_calls=(ToolCall(id=ToolCallId("c1"), name="login", arguments={"password": "p4ss"}),)
)
RESULT = Message(role="tool", content="5", tool_call_id=ToolCallId("c1"), name="add")


def stored(sent: SentPrompt | None, policy: PromptPolicy) -> PromptDelta:
    """What the pipeline's writer stores of what a call sent first."""
    return PromptDelta() if sent is None else stored_delta(sent, policy)


def test_each_call_stores_only_the_messages_no_call_sent_before() -> None:
    log = PromptLog()

    first, first_sent = log.sent([SYSTEM, GOAL], [ADD], provider="openai", model="m", parameters={"temperature": 0})
    second, second_sent = log.sent([SYSTEM, GOAL, CALL, RESULT], [ADD])
    first_new, second_new = stored(first_sent, PromptPolicy()), stored(second_sent, PromptPolicy())

    assert (first.message_count, second.message_count) == (2, 4)
    assert [m.seq for m in first_new.messages] == [1, 2]
    assert [m.seq for m in second_new.messages] == [3, 4]
    assert [m.message for m in (*first_new.messages, *second_new.messages)] == [SYSTEM, GOAL, CALL, RESULT]
    assert first.tools_digest == second.tools_digest == digest_of([ADD])
    assert first_new.tool_set is not None
    assert first_new.tool_set.schemas == (ADD,)
    assert second_new.tool_set is None  # the same tool set is stored once
    assert (first.provider, first.model, first.parameters) == ("openai", "m", {"temperature": 0})


def test_a_new_tool_set_is_stored_when_it_changes_and_no_tools_is_no_set() -> None:
    log = PromptLog()
    log.sent([SYSTEM], [ADD])
    extra = ToolSchema(name="final_result", description="Done.", parameters={})

    changed, changed_sent = log.sent([SYSTEM, GOAL], [ADD, extra])
    none, none_sent = log.sent([SYSTEM, GOAL, RESULT], [])
    changed_new, none_new = stored(changed_sent, PromptPolicy()), stored(none_sent, PromptPolicy())

    assert changed_new.tool_set is not None
    assert changed_new.tool_set.digest == changed.tools_digest
    assert (none.tools_digest, none_new.tool_set) == (None, None)


def test_digests_are_of_what_was_sent_and_redaction_changes_only_what_is_stored() -> None:
    policy = PromptPolicy(redact_fields=frozenset({"password"}), secrets=("sk-secret-value", "abc"))
    log = PromptLog()
    goal = Message(role="user", content="use sk-secret-value, abc is fine")

    _, sent = log.sent([SYSTEM, goal, CALL], [])
    new = stored(sent, policy)

    stored_goal, stored_call = new.messages[1], new.messages[2]
    assert stored_goal.message.content == "use [redacted], abc is fine"  # secrets under 6 characters are left alone
    assert stored_goal.digest == digest_of(goal)
    assert stored_call.message.tool_calls[0].arguments == {"password": "[redacted]"}
    assert stored_call.digest == digest_of(CALL)


def test_without_payloads_messages_keep_roles_ids_and_names_only() -> None:
    log = PromptLog(payloads=False)

    ref, sent = log.sent([SYSTEM, GOAL, CALL, RESULT], [])
    new = stored(sent, PromptPolicy(payloads=False))

    assert ref.payloads is False
    assert [m.message for m in new.messages] == [
        Message(role="system"),
        Message(role="user"),
        Message(role="assistant", tool_calls=(ToolCall(id=ToolCallId("c1"), name="login"),)),
        Message(role="tool", tool_call_id=ToolCallId("c1"), name="add"),
    ]


def test_stored_steps_lose_secrets_and_redacted_fields() -> None:
    policy = PromptPolicy(redact_fields=frozenset({"password"}), secrets=("sk-secret-value",))
    llm = LLMStep(
        run_id=RunId("r"),
        step_no=1,
        created_at=T0,
        latency_ms=1,
        text="the key is sk-secret-value",
        tool_calls=CALL.tool_calls,
    )
    tool = ToolStep(
        run_id=RunId("r"),
        step_no=2,
        created_at=T0,
        latency_ms=1,
        call_id=ToolCallId("c1"),
        tool_name="login",
        arguments={"password": "p4ss", "user": "sk-secret-value"},
        result=ToolResult(ok=False, output="sk-secret-value", error="bad sk-secret-value"),
    )

    stored_llm = stored_step(llm, policy)
    stored_tool = stored_step(tool, policy)

    assert "sk-secret-value" not in msgspec.json.encode([stored_llm, stored_tool]).decode()
    assert "p4ss" not in msgspec.json.encode([stored_llm, stored_tool]).decode()
    assert isinstance(stored_tool, ToolStep)
    assert stored_tool.arguments == {"password": "[redacted]", "user": "[redacted]"}


def test_many_secrets_are_kept_out_as_surely_as_a_few() -> None:
    # a few secrets are looked for one by one, many with one regular expression: both find them all
    few = [f"sk-few-secret-{n:02}" for n in range(3)]
    many = [f"sk-many-secret-{n:02}" for n in range(40)]
    for secrets in (few, many):
        policy = PromptPolicy(redact_fields=frozenset({"password"}), secrets=tuple(secrets))
        said = Message(role="user", content=f"first {secrets[0]}, last {secrets[-1]}")
        plain = Message(role="user", content="nothing to hide")

        _, sent = PromptLog().sent([SYSTEM, said, plain, CALL], [])
        new = stored(sent, policy)

        assert new.messages[1].message.content == "first [redacted], last [redacted]"
        assert new.messages[2].message is plain  # a message holding no secret is stored as it came
        assert new.messages[3].message.tool_calls[0].arguments == {"password": "[redacted]"}
        assert [m.digest for m in new.messages] == [digest_of(m) for m in (SYSTEM, said, plain, CALL)]


def test_a_handoffs_system_prompt_is_stored_apart_and_each_call_names_the_one_it_sent() -> None:
    log = PromptLog()
    handed = Message(role="system", content="you are billing")

    first, _ = log.sent([SYSTEM, GOAL, CALL, RESULT], [ADD], step_no=1)
    conversation = [handed, GOAL, CALL, RESULT]
    second, second_sent = log.sent(conversation, [ADD], step_no=4)
    third, third_sent = log.sent([*conversation, RESULT], [ADD], step_no=6)
    new = stored(second_sent, PromptPolicy())

    assert (first.system_seq, second.system_seq, third.system_seq) == (None, -4, -4)
    assert [(m.seq, m.message) for m in new.messages] == [(-4, handed)]  # message 1 stays the first agent's
    assert third_sent is not None
    assert third_sent.system is None  # stored once


def test_a_resumed_log_of_a_handed_off_run_stores_the_system_prompt_it_sends_apart() -> None:
    log = PromptLog()
    log.handed_off()

    ref, sent = log.sent([SYSTEM, GOAL], [], step_no=5)
    new = stored(sent, PromptPolicy())

    assert ref.system_seq == -5
    assert [m.seq for m in new.messages] == [1, 2, -5]  # seq 1 is kept as first stored (insert-if-absent)
