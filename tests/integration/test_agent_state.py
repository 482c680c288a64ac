"""The agent loop on the real state adapters: runs, steps and sessions in Postgres and Redis."""

from collections.abc import Sequence

import pytest
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.adapters.postgres import SqlaRunRepository, SqlaTraceSink, create_engine, parse_database_url
from agentkit.adapters.redis import RedisSessionStore
from agentkit.adapters.system import SystemClock, UuidIdGenerator
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.application.runs.run_agent import RunAgent
from agentkit.application.tools import Tool, ToolRegistry
from agentkit.domain.ids import OwnerId, SessionId, ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from tests.sample_tools import add

pytestmark = pytest.mark.integration
OWNER = OwnerId("key-1")


def calls_add(call_id: str, a: float, b: float) -> LLMResponse:
    call = ToolCall(id=ToolCallId(call_id), name="add", arguments={"a": a, "b": b})
    return LLMResponse(tool_calls=(call,), usage=Usage(input_tokens=100, output_tokens=20))


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=150, output_tokens=10))


# Idempotent: these tests are about the writes of a run's outcome. (Before a non-idempotent call the
# loop stores the trace so far; a trace store that stays down fails such a run before the call.)
ADD = Tool(add.fn, name="add", idempotent=True)


class RealStack:
    """A loop over Postgres runs and trace and Redis sessions."""

    def __init__(
        self,
        engine: AsyncEngine,
        redis: Redis,
        prefix: str,
        *,
        trace: TraceSink | None = None,
        store_retry_s: float = 300.0,
    ) -> None:
        clock = SystemClock()
        self._store_retry_s = store_retry_s
        self.runs = SqlaRunRepository(engine)
        self.trace = SqlaTraceSink(engine)
        self.sessions = RedisSessionStore(redis, clock=clock, prefix=prefix)
        self._clock = clock
        self._sink = trace or self.trace

    async def run(self, script: Sequence[LLMResponse], goal: str, *, session: str | None = None) -> Run:
        self.llm = ScriptedLLMClient(script)
        config = AgentConfig(store_retry_s=self._store_retry_s)
        loop = AgentLoop(
            memory_loop_deps(
                self.llm,
                ToolRegistry([ADD], default_timeout_s=5, output_max_chars=1000),
                runs=self.runs,
                trace=self._sink,
                sessions=self.sessions,
                clock=self._clock,
                config=config,
            )
        )
        create = CreateRun(runs=self.runs, clock=self._clock, ids=UuidIdGenerator(), max_steps=5, max_goal_chars=500)
        inp = CreateRunInput(owner=OWNER, goal=goal, session_id=SessionId(session) if session else None)
        return await RunAgent(create=create, loop=loop).execute(inp)


async def test_a_full_run_persists_the_run_and_every_step(
    pg_engine: AsyncEngine, redis_client: Redis, redis_prefix: str
) -> None:
    stack = RealStack(pg_engine, redis_client, redis_prefix)

    run = await stack.run([calls_add("c1", 2, 3), answer("2 + 3 = 5")], "what is 2 + 3?")

    assert run.status is RunStatus.SUCCEEDED
    assert await stack.runs.get(run.id) == run
    assert (run.input_tokens, run.output_tokens) == (250, 30)
    steps = await stack.trace.steps(run.id)
    assert [(type(s).__name__, s.step_no) for s in steps] == [("LLMStep", 1), ("ToolStep", 2), ("LLMStep", 3)]
    tool_step = steps[1]
    assert isinstance(tool_step, ToolStep)
    assert (tool_step.tool_name, tool_step.arguments, tool_step.result.output) == ("add", {"a": 2, "b": 3}, "5.0")
    assert sum(s.usage.total_tokens for s in steps if isinstance(s, LLMStep)) == 280


async def test_a_session_carries_the_conversation_into_the_next_run(
    pg_engine: AsyncEngine, redis_client: Redis, redis_prefix: str
) -> None:
    first = await RealStack(pg_engine, redis_client, redis_prefix).run(
        [calls_add("c1", 2, 3), answer("It is 5.")], "what is 2 + 3?", session="chat-1"
    )
    # A new stack, as another process would build it: only Redis connects the two runs.
    second_stack = RealStack(pg_engine, redis_client, redis_prefix)
    second = await second_stack.run([answer("You asked about 2 + 3.")], "what did I ask?", session="chat-1")

    assert first.status is second.status is RunStatus.SUCCEEDED
    sent, _ = second_stack.llm.requests[0]
    contents = [m.content for m in sent]
    assert "what is 2 + 3?" in contents
    assert "It is 5." in contents
    assert contents[-1] == "what did I ask?"
    tool_results = [m for m in sent if m.role == "tool"]
    asked = {c.id for m in sent for c in m.tool_calls}
    assert all(m.tool_call_id in asked for m in tool_results)


async def test_a_run_whose_trace_database_stays_down_keeps_its_answer_but_does_not_claim_success(
    pg_engine: AsyncEngine, redis_client: Redis, redis_prefix: str, unused_tcp_port: int
) -> None:
    dead = create_engine(parse_database_url(f"postgresql://postgres@127.0.0.1:{unused_tcp_port}/nowhere"))
    down = SqlaTraceSink(dead, write_timeout_s=1)
    stack = RealStack(pg_engine, redis_client, redis_prefix, trace=down, store_retry_s=1.5)

    run = await stack.run([calls_add("c1", 1, 1), answer("2")], "1 + 1?")

    # the run waited for its trace (retried all along), then ended without claiming a complete trace
    assert run.status is RunStatus.FAILED
    assert run.answer == "2"
    assert run.failure_reason is not None
    assert "its steps could not be stored" in run.failure_reason
    assert await stack.runs.get(run.id) == run
    assert down.failed_writes == 0  # nothing given up: an outage is retried, not dropped
    assert down.retried_writes >= 1
    assert down.backlog() == 3
    await down.aclose(timeout_s=0.1)
    await dead.dispose()
