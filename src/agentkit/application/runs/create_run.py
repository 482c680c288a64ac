"""CreateRun: validate a request for a run in full, then store it pending: the one way a run comes in."""

import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from typing import Any, Final, TypeAlias

import msgspec

from agentkit.application.agents.catalog import AgentCatalog
from agentkit.application.agents.profile import DEFAULT_AGENT
from agentkit.application.errors import IdempotencyConflict, IdempotencyMismatch, UnknownAgent, WebhooksNotConfigured
from agentkit.application.ports.callback_url_guard import CallbackURLGuard
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.id_generator import IdGenerator
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.tools.final_result import FINAL_RESULT, final_result_tool
from agentkit.domain.errors import InvalidGoal, InvalidOutputSchema, InvalidTools
from agentkit.domain.ids import OwnerId, SessionId
from agentkit.domain.run import Run, validate_goal
from agentkit.domain.tools import ToolSchema

MAX_TOKEN_BUDGET: Final = 2**31 - 1
"""The largest token budget a run can record (a 32-bit integer, as the store keeps it)."""
MIN_COST_BUDGET: Final = 0.000001
"""The smallest cost budget, in US dollars (a millionth of a dollar: less is no budget one could keep)."""
MAX_COST_BUDGET: Final = 1_000_000.0
"""The largest cost budget a run may ask for, in US dollars (finite, so `inf` and `nan` are refused)."""
_NOT_TEXT: Final = re.compile("[\x00\ud800-\udfff]")
_TOOL_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


class CreateRunInput(msgspec.Struct, frozen=True, kw_only=True):
    """A request for a run.

    Attributes:
        owner: Who asks (an API key id).
        goal: What to do.
        session_id: The conversation to continue, if any.
        output_schema: A JSON object schema the final output must follow, if any.
        max_steps: Fewer LLM turns than the default, if wanted (never more).
        token_budget: A token budget for this run (never above RUN_TOKEN_BUDGET, when that is set).
        cost_budget: US dollars this run may spend (its LLM calls' cost, from the price table).
        idempotency_key: The client's key for safe retries, if any.
        request_fingerprint: A hash of the request body that came with the key.
        agent: The agent to run (None: `default`).
        approval_required: Tools whose calls need an approval in this run.
        client_tools: Tools the client runs itself (a call pauses the run until its output comes).
        callback_url: Where the run's webhook events are POSTed (None: the service's WEBHOOK_URL, if any).
        stream: The client watches the run as it is written: every LLM call streams its fragments.
    """

    owner: OwnerId
    goal: str
    session_id: SessionId | None = None
    output_schema: dict[str, Any] | None = None
    max_steps: int | None = None
    token_budget: int | None = None
    idempotency_key: str | None = None
    request_fingerprint: str | None = None
    agent: str | None = None
    cost_budget: float | None = None
    approval_required: tuple[str, ...] = ()
    client_tools: tuple[ToolSchema, ...] = ()
    callback_url: str | None = None
    stream: bool = False


class ValidRunRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A request that passed validation, its limits resolved: what `CreateRun.store` takes."""

    request: CreateRunInput
    goal: str
    max_steps: int
    token_budget: int | None
    agent: str = DEFAULT_AGENT
    agent_version: str | None = None
    output_schema: dict[str, Any] | None = None


HandOver: TypeAlias = Callable[[Run], Awaitable[None]]
"""What a caller does with its run the moment it is stored (hands it to the scheduler, say)."""

Admission: TypeAlias = Callable[["ValidRunRequest"], AbstractAsyncContextManager[HandOver]]
"""A caller's admission of a request known to be valid and new: entering it takes what the run needs
(a place among the runs in flight, the owner's quota) or refuses, and gives the hand-over; the run is
stored and handed over inside it; leaving it with an error (the store failed) gives back what it took."""


class CreateRunResult(msgspec.Struct, frozen=True, kw_only=True):
    """The stored run, and whether it was a replay of an earlier request with the same key."""

    run: Run
    replayed: bool = False


class CreateRun:
    """Store a new pending run, committed before anyone hears about it.

    Rules:
    - Everything is checked before anything is read or written, and nothing after the checks can
      fail but the store itself: a refused request leaves no row behind.
    - The goal is stripped and must be non-empty and at most `max_goal_chars` long; no text of the
      request (goal, session id, idempotency key, output schema) may hold U+0000 or a lone surrogate.
    - `max_steps` may lower the configured limit, never raise it; so may `token_budget` (at most
      MAX_TOKEN_BUDGET).
    - An output schema must build the `final_result` tool the run will use (see `output_schema`).
    - With an idempotency key: the same key and the same request return the first run (a replay);
      the same key with another request is refused.
    - The agent must be configured (UnknownAgent otherwise); its limits stand in for the service's
      and its output schema for a request that gives none. The run records the agent and its version.
    - A callback URL must pass the callback guard (http_fetch's SSRF rules, with DNS: the one check
      that does I/O); with webhooks off (no guard) a callback is refused.
    - A caller that admits runs (SubmitRun: places in flight, the owner's quota) gives its
      `Admission`: it is entered only for a request known to be valid and new, so nothing is counted
      for a refused or replayed one, and the run is stored and handed over inside it.
    - Two requests with one idempotency key at once: the second to store finds the first's run and
      is answered as a replay of it, or refused if its request differs, like a later retry.

    Every entry point (the HTTP API, the CLI, the MCP server, the library) creates runs through
    `execute`: one way in.
    """

    def __init__(
        self,
        *,
        runs: RunRepository,
        clock: Clock,
        ids: IdGenerator,
        max_steps: int,
        max_goal_chars: int,
        pending_lease_s: float | None = None,
        token_budget: int | None = None,
        agents: AgentCatalog | None = None,
        callbacks: CallbackURLGuard | None = None,
    ) -> None:
        self._agents = agents
        self._callbacks = callbacks
        self._runs = runs
        self._clock = clock
        self._ids = ids
        self._max_steps = max_steps
        self._max_goal_chars = max_goal_chars
        self._token_budget = token_budget
        # a pending run that no executor picks up within its lease expires, so none waits forever
        self._pending_lease = None if pending_lease_s is None else timedelta(seconds=pending_lease_s)

    async def execute(self, inp: CreateRunInput, *, admission: Admission | None = None) -> CreateRunResult:
        """Validate and store the run (or return the earlier run this request repeats).

        Raises:
            InvalidGoal, InvalidOutputSchema, InvalidTools, UnknownAgent, InvalidCallbackURL,
            WebhooksNotConfigured: the request is not acceptable (nothing was read or stored).
            IdempotencyMismatch: the idempotency key was used with a different request.
            ApplicationError: what `admission` refuses with (Overloaded, RateLimited, ...).
        """
        valid = self.validate(inp)
        await self._check_callback(inp)
        earlier = await self._replay_of(inp)
        if earlier is not None:
            return CreateRunResult(run=earlier, replayed=True)
        try:
            if admission is None:
                return CreateRunResult(run=await self._store(valid))
            async with admission(valid) as hand_over:
                run = await self._store(valid)
                await hand_over(run)
            return CreateRunResult(run=run)
        except IdempotencyConflict:
            earlier = await self._replay_of(inp)  # a request with the same key stored its run first
            if earlier is None:
                raise
            return CreateRunResult(run=earlier, replayed=True)

    def validate(self, inp: CreateRunInput) -> ValidRunRequest:
        """Check the request (no I/O).

        Raises:
            InvalidGoal: the goal, `max_steps`, `token_budget` or the output schema is not acceptable.
            UnknownAgent: no agent has the name asked for.
        """
        agent = None if self._agents is None else self._agents.require(inp.agent)
        if agent is None and inp.agent not in (None, DEFAULT_AGENT):
            raise UnknownAgent(f"no agent named {inp.agent!r}; the agents are: {DEFAULT_AGENT}")
        goal = validate_goal(inp.goal, max_chars=self._max_goal_chars)
        _refuse_non_text("session_id", inp.session_id)
        _refuse_non_text("idempotency_key", inp.idempotency_key)
        if inp.max_steps is not None and inp.max_steps < 1:
            raise InvalidGoal("max_steps must be at least 1")
        if inp.token_budget is not None and not 1 <= inp.token_budget <= MAX_TOKEN_BUDGET:
            raise InvalidGoal(f"token_budget must be between 1 and {MAX_TOKEN_BUDGET}")
        if inp.cost_budget is not None and not MIN_COST_BUDGET <= inp.cost_budget <= MAX_COST_BUDGET:
            raise InvalidGoal(f"cost_budget must be between {MIN_COST_BUDGET:g} and {MAX_COST_BUDGET:g} (US dollars)")
        if inp.output_schema is not None:
            try:
                # the very tool the run will build: if this works, the run cannot fail on its schema later
                final_result_tool(inp.output_schema)
            except ValueError as exc:
                raise InvalidOutputSchema(str(exc)) from None
        _check_tools(inp, None if agent is None else agent.registry().names())
        max_steps = self._max_steps if agent is None else min(agent.max_steps, self._max_steps)
        token_budget = self._token_budget if agent is None else _lower(agent.token_budget, self._token_budget)
        return ValidRunRequest(
            request=inp,
            goal=goal,
            max_steps=min(inp.max_steps or max_steps, max_steps),
            token_budget=_lower(inp.token_budget, token_budget),
            agent=DEFAULT_AGENT if agent is None else agent.name,
            agent_version=None if agent is None else agent.version,
            # the agent's schema was checked when the agents file was loaded
            output_schema=inp.output_schema if inp.output_schema is not None or agent is None else agent.output_schema,
        )

    async def _check_callback(self, inp: CreateRunInput) -> None:
        """Check the callback URL, if the request has one (its host is resolved: after `validate`).

        Raises:
            InvalidCallbackURL: not http(s), too long, or its host is or resolves to a refused address.
            WebhooksNotConfigured: webhooks are off (no WEBHOOK_SECRET to sign them with).
        """
        if inp.callback_url is None:
            return
        if self._callbacks is None:
            raise WebhooksNotConfigured(
                "callback_url: this server sends no webhooks (its WEBHOOK_SECRET is not set); leave callback_url out"
            )
        await self._callbacks.check(inp.callback_url)

    async def _replay_of(self, inp: CreateRunInput) -> Run | None:
        """The run an earlier request with the same idempotency key created, if any.

        Raises:
            IdempotencyMismatch: the key was used with a different request.
        """
        if inp.idempotency_key is None:
            return None
        earlier = await self._runs.get_by_idempotency_key(inp.owner, inp.idempotency_key)
        if earlier is not None and earlier.request_fingerprint != inp.request_fingerprint:
            raise IdempotencyMismatch("this Idempotency-Key was already used with a different request")
        return earlier

    async def _store(self, valid: ValidRunRequest) -> Run:
        """Store the pending run.

        Raises:
            IdempotencyConflict: a concurrent request with the same idempotency key stored its run first.
        """
        inp = valid.request
        now = self._clock.now()
        run = Run(
            id=self._ids.new_run_id(),
            owner=inp.owner,
            goal=valid.goal,
            session_id=inp.session_id,
            output_schema=valid.output_schema,
            max_steps=valid.max_steps,
            token_budget=valid.token_budget,
            cost_budget=inp.cost_budget,
            created_at=now,
            expires_at=None if self._pending_lease is None else now + self._pending_lease,
            idempotency_key=inp.idempotency_key,
            request_fingerprint=inp.request_fingerprint,
            agent=valid.agent,
            agent_version=valid.agent_version,
            approval_required=tuple(dict.fromkeys(inp.approval_required)),
            client_tools=inp.client_tools,
            callback_url=inp.callback_url,
            stream=inp.stream,
        )
        await self._runs.add(run)
        return run


def _check_tools(inp: CreateRunInput, agent_tools: list[str] | None) -> None:
    """Client tools need valid names of their own (not the agent's tools') and JSON object schemas.

    Approval-required names are not checked against the agent's tools: an MCP server's tools may
    appear after the run was accepted. They are matched when the model calls a tool.
    """
    taken = {FINAL_RESULT, *(agent_tools or ())}
    seen: set[str] = set()
    for client_tool in inp.client_tools:
        name = client_tool.name
        if not _TOOL_NAME.fullmatch(name):
            raise InvalidTools(f"client tool name {name!r} must be 1-64 ASCII letters, digits, '_' or '-'")
        if name in seen:
            raise InvalidTools(f"client tool {name!r} is declared twice")
        if name in taken:
            raise InvalidTools(f"client tool {name!r} has the name of one of the agent's own tools")
        if client_tool.parameters.get("type") != "object":
            raise InvalidTools(f'client tool {name!r}: parameters must be a JSON object schema ({{"type": "object"}})')
        seen.add(name)
    for name in inp.approval_required:
        if not _TOOL_NAME.fullmatch(name):
            raise InvalidTools(f"approval_required: {name!r} is not a tool name")


def _refuse_non_text(name: str, value: str | None) -> None:
    found = None if value is None else _NOT_TEXT.search(value)
    if found is not None:
        raise InvalidGoal(f"{name} contains U+{ord(found.group()):04X}; it must be text")


def _lower(asked: int | None, configured: int | None) -> int | None:
    """The smaller of two optional limits (None means no limit)."""
    limits = [limit for limit in (asked, configured) if limit is not None]
    return min(limits) if limits else None
