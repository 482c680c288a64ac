"""SessionStore contract: histories per (owner, session), a bounded window, a TTL, and prune."""

from datetime import timedelta

from agentkit.domain.ids import OwnerId, SessionId, ToolCallId
from agentkit.domain.messages import Message, ToolCall
from tests.contract.conftest import StateKit

ALICE, BOB = OwnerId("key-alice"), OwnerId("key-bob")
CHAT = SessionId("chat:1")


def system() -> Message:
    return Message(role="system", content="You are careful.")


def user(text: str) -> Message:
    return Message(role="user", content=text)


def asks_tool(call_id: str) -> Message:
    call = ToolCall(id=ToolCallId(call_id), name="add", arguments={"a": 2, "b": 3}, provider_data={"sig": "x"})
    return Message(role="assistant", tool_calls=(call,), provider_data={"turn": 1})


def tool_result(call_id: str) -> Message:
    return Message(role="tool", content="5", tool_call_id=ToolCallId(call_id), name="add")


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)


async def test_a_new_session_is_empty_and_a_saved_one_reads_back(kit: StateKit) -> None:
    store = kit.sessions()
    history = [system(), user("2+3?"), asks_tool("c1"), tool_result("c1"), assistant("5")]
    assert await store.load(ALICE, CHAT) == []

    await store.save(ALICE, CHAT, history)

    assert await store.load(ALICE, CHAT) == history


async def test_owners_do_not_share_a_session_id(kit: StateKit) -> None:
    store = kit.sessions()
    await store.save(ALICE, CHAT, [user("alice")])
    await store.save(BOB, CHAT, [user("bob")])
    # An id with the separator inside must not collide with another owner's key.
    await store.save(OwnerId("key-alice:chat"), SessionId("1"), [user("tricky")])

    assert await store.load(ALICE, CHAT) == [user("alice")]
    assert await store.load(BOB, CHAT) == [user("bob")]


async def test_the_window_keeps_the_system_prompt_and_the_newest_messages(kit: StateKit) -> None:
    store = kit.sessions(max_messages=4)
    history = [system(), *(user(f"m{i}") for i in range(10))]

    await store.save(ALICE, CHAT, history)

    assert await store.load(ALICE, CHAT) == [system(), user("m7"), user("m8"), user("m9")]


async def test_the_window_never_keeps_a_tool_result_without_the_turn_that_asked_for_it(kit: StateKit) -> None:
    store = kit.sessions(max_messages=4)
    # The newest 3 non-system messages would start with the tool result of c1: it must go too.
    history = [system(), user("2+3?"), asks_tool("c1"), tool_result("c1"), assistant("5"), user("thanks")]

    await store.save(ALICE, CHAT, history)
    kept = await store.load(ALICE, CHAT)

    assert kept == [system(), assistant("5"), user("thanks")]
    answered = {m.tool_call_id for m in kept if m.role == "tool"}
    asked = {c.id for m in kept for c in m.tool_calls}
    assert answered <= asked


async def test_a_session_expires_after_its_ttl_and_a_save_renews_it(kit: StateKit) -> None:
    store = kit.sessions(ttl_s=1)
    await store.save(ALICE, CHAT, [user("hi")])
    await store.save(BOB, CHAT, [user("hi")])
    await kit.wait(0.6)
    await store.save(BOB, CHAT, [user("again")])
    await kit.wait(0.6)

    assert await store.load(ALICE, CHAT) == []
    assert await store.load(BOB, CHAT) == [user("again")]


async def test_delete_saved_before_forgets_only_sessions_idle_since_the_cutoff(kit: StateKit) -> None:
    store = kit.sessions()
    old = [SessionId(f"old-{i}") for i in range(3)]
    for session in old:
        await store.save(ALICE, session, [user("old")])
    kit.clock.advance(600)
    cutoff = kit.clock.now()
    kit.clock.advance(600)
    await store.save(ALICE, CHAT, [user("recent")])

    assert await store.delete_saved_before(cutoff - timedelta(seconds=1)) == 3
    assert await store.delete_saved_before(cutoff) == 0
    assert [await store.load(ALICE, s) for s in old] == [[], [], []]
    assert await store.load(ALICE, CHAT) == [user("recent")]


async def test_delete_forgets_one_session_of_one_owner_and_says_whether_it_existed(kit: StateKit) -> None:
    store = kit.sessions()
    await store.save(ALICE, CHAT, [user("hi")])
    await store.save(BOB, CHAT, [user("bob's")])

    assert await store.delete(ALICE, CHAT) is True
    assert await store.load(ALICE, CHAT) == []
    assert await store.load(BOB, CHAT) == [user("bob's")]
    assert await store.delete(ALICE, CHAT) is False
    assert await store.delete(ALICE, SessionId("never")) is False
