"""POST /v1/chat: a run in a session, with the runs' key, limits, rate limit and trace."""

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.domain.messages import LLMResponse, Usage
from tests.http_fixtures import ApiFactory, headers


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=5, output_tokens=1))


async def test_a_chat_starts_a_session_and_the_next_message_continues_it(api_factory: ApiFactory) -> None:
    llm = ScriptedLLMClient([answer("Hello, Ada."), answer("You are Ada.")])
    api = await api_factory(llm=llm)

    first = await api.post("/v1/chat", json={"message": "I am Ada."}, headers=headers())
    session = first.json()["session_id"]
    second = await api.post("/v1/chat", json={"message": "Who am I?", "session_id": session}, headers=headers())
    run = await api.get(f"/v1/runs/{second.json()['run_id']}", headers=headers())
    trace = await api.get(second.json()["links"]["trace"], headers=headers())

    assert first.status_code == 200
    assert session.startswith("chat-")
    assert (first.json()["answer"], first.json()["status"], first.json()["agent"]) == (
        "Hello, Ada.",
        "succeeded",
        "default",
    )
    assert (second.status_code, second.json()["session_id"], second.json()["answer"]) == (200, session, "You are Ada.")
    assert second.headers["location"] == f"/v1/runs/{second.json()['run_id']}"
    assert (run.json()["goal"], run.json()["session_id"]) == ("Who am I?", session)
    assert trace.json()["agent"] == "default"
    sent = [m.content for m in llm.requests[1][0] if m.role in ("user", "assistant")]
    assert sent == ["I am Ada.", "Hello, Ada.", "Who am I?"]


async def test_a_chat_needs_the_key_obeys_the_rate_limit_and_refuses_bad_messages(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("one")], rate_limit_per_min=1)

    anonymous = await api.post("/v1/chat", json={"message": "hi"})
    blank = await api.post("/v1/chat", json={"message": "   "}, headers=headers())
    unknown_field = await api.post("/v1/chat", json={"message": "hi", "goal": "x"}, headers=headers())
    accepted = await api.post("/v1/chat", json={"message": "hi"}, headers=headers())
    limited = await api.post("/v1/chat", json={"message": "again"}, headers=headers())

    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthorized")
    assert blank.status_code == 422
    assert unknown_field.status_code == 422
    assert accepted.status_code == 200
    assert (limited.status_code, limited.json()["code"]) == (429, "rate_limited")
    assert "retry-after" in limited.headers
