"""The wire format: msgspec Structs for every request and response, and the mapping from the domain."""

from datetime import datetime
from typing import Annotated, Any, Final, Literal, cast

import msgspec

from agentkit.application.agents.profile import AGENT_NAME_PATTERN
from agentkit.application.runs.create_run import MAX_COST_BUDGET, MAX_TOKEN_BUDGET, MIN_COST_BUDGET
from agentkit.domain.actions import RequiredAction
from agentkit.domain.messages import Message
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, RunPrompts, Step
from agentkit.domain.tools import ToolSchema

MAX_STEPS_ASKED: Final = 1000
MAX_TOOLS_ASKED: Final = 64
# What providers accept as a tool name, as JSON Schema writes it (the decoder's own pattern ends in \Z)
TOOL_NAME_PATTERN: Final = r"^[A-Za-z_][A-Za-z0-9_-]*$"
# What Python's str.strip() removes (the characters str.isspace() accepts); a unit test compares the two.
WHITESPACE: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)


def _escaped(chars: str) -> str:
    """Characters as `\\uXXXX` escapes: a character class ECMA-262 (JSON Schema) and Python read alike."""
    return "".join(f"\\u{ord(char):04x}" for char in chars)


_NUL = _escaped("\x00")
# The goal's rule as a JSON Schema pattern: some character that is neither U+0000 nor white space,
# and no U+0000 anywhere. The domain's validate_goal enforces it (with clearer messages).
GOAL_PATTERN: Final = f"^[^{_NUL}]*[^{_NUL}{_escaped(WHITESPACE)}][^{_NUL}]*$"

SessionIdText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        # \Z, not $: Python's $ also matches before a final newline, JSON Schema's does not
        pattern=r"^[A-Za-z0-9._:-]+\Z",
        description="Continue this conversation (letters, digits and . _ : -).",
        extra_json_schema={"extra": {"pattern": r"^[A-Za-z0-9._:-]+$"}},
    ),
]


AgentNameText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        pattern=AGENT_NAME_PATTERN,
        description="The agent to run (GET /v1/agents lists them); `default` when left out.",
    ),
]


# The run statuses as the wire spells them (a test holds them to the domain's RunStatus).
StatusText = Literal[
    "pending",
    "running",
    "requires_action",
    "succeeded",
    "failed",
    "refused",
    "max_steps_exceeded",
    "timed_out",
    "cancelled",
    "expired",
]


ToolNameText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z_][A-Za-z0-9_-]*\Z",
        description="A tool name: ASCII letters, digits, _ and -, starting with a letter or _.",
        extra_json_schema={"extra": {"pattern": TOOL_NAME_PATTERN}},
    ),
]


class ClientToolSpec(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A tool the client runs itself (its name is its key in `client_tools`): offered to the model; a
    call pauses the run until its output is posted."""

    description: Annotated[str, msgspec.Meta(max_length=4000, description="What it does, for the model.")] = ""
    parameters: Annotated[
        dict[str, Any],
        msgspec.Meta(
            description='A JSON object schema of its arguments (`{"type": "object", ...}`).',
            extra_json_schema={"extra": {"properties": {"type": {"const": "object"}}, "required": ["type"]}},
        ),
    ] = msgspec.field(default_factory=lambda: {"type": "object", "properties": {}})


CALLBACK_URL_PATTERN: Final = "^[hH][tT][tT][pP][sS]?://"
CallbackURLText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=2048,
        pattern=CALLBACK_URL_PATTERN,
        description=(
            "POST the run's events here: when it enters `requires_action` and when it ends, signed per the "
            "Standard Webhooks spec and retried with backoff (GET /v1/runs/{id}/webhooks shows each attempt). "
            "http(s) only; a host that is or resolves to a private, loopback, link-local or metadata address "
            "is refused (422 `invalid_callback_url`). Left out: the server's WEBHOOK_URL, if it has one."
        ),
    ),
]
NoCallbackURL = Annotated[
    None,
    msgspec.Meta(
        description=(
            "Webhooks are off on this server (it has no WEBHOOK_SECRET to sign them with): leave callback_url out."
        )
    ),
]


class RunCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/runs: what the agent should do.

    The server decodes a subclass made for its settings (`run_create_type`): there the goal's
    maximum length is MAX_GOAL_CHARS. The OpenAPI document shows that subclass.
    """

    goal: Annotated[str, msgspec.Meta(min_length=1, description="The task, in plain words.")]
    session_id: SessionIdText | None = None
    output_schema: (
        Annotated[dict[str, Any], msgspec.Meta(description="A JSON object schema the final output must follow.")] | None
    ) = None
    max_steps: (
        Annotated[int, msgspec.Meta(ge=1, le=MAX_STEPS_ASKED, description="At most this many LLM turns.")] | None
    ) = None
    token_budget: (
        Annotated[
            int, msgspec.Meta(ge=1, le=MAX_TOKEN_BUDGET, description="At most this many input plus output tokens.")
        ]
        | None
    ) = None
    agent: AgentNameText | None = None
    cost_budget: (
        Annotated[
            float,
            msgspec.Meta(
                ge=MIN_COST_BUDGET,
                le=MAX_COST_BUDGET,
                description=(
                    "At most this many US dollars of LLM calls (priced from genai-prices); a run whose "
                    "model has no known price stops after its first call."
                ),
            ),
        ]
        | None
    ) = None
    approval_required: (
        Annotated[
            list[ToolNameText],
            msgspec.Meta(
                max_length=MAX_TOOLS_ASKED,
                description=(
                    "Tools whose calls need an approval in this run (besides those marked "
                    "`requires_approval`): the run pauses in `requires_action` until POST .../approvals. "
                    "Names are matched when the model calls a tool (an MCP server's tools may appear later); "
                    "the run shows them back in `approval_required`."
                ),
                # Litestar drops the item type's own constraints from the document: they are stated here
                extra_json_schema={
                    "extra": {
                        "items": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": TOOL_NAME_PATTERN}
                    }
                },
            ),
        ]
        | None
    ) = None
    client_tools: (
        Annotated[
            dict[ToolNameText, ClientToolSpec],
            msgspec.Meta(
                max_length=MAX_TOOLS_ASKED,
                description=(
                    "Tools the client runs itself, by name (not one of the agent's own tools' names): a call "
                    "pauses the run in `requires_action` until its output comes with POST .../tool_outputs."
                ),
                extra_json_schema={
                    "extra": {
                        "propertyNames": {"minLength": 1, "maxLength": 64, "pattern": TOOL_NAME_PATTERN},
                        "maxProperties": MAX_TOOLS_ASKED,
                        # a tool's fields are these two only (the decoder refuses others)
                        "additionalProperties": {
                            "type": "object",
                            "properties": {"description": {}, "parameters": {}},
                            "additionalProperties": False,
                        },
                    }
                },
            ),
        ]
        | None
    ) = None
    callback_url: CallbackURLText | None = None


def agent_name_type(agent_names: tuple[str, ...]) -> Any:
    """An agent name whose document lists the configured agents (the use-case refuses others, 422 `unknown_agent`)."""
    return Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=64,
            pattern=AGENT_NAME_PATTERN,
            description="The agent to run (GET /v1/agents lists them); `default` when left out.",
            # null is in the enum too: the field may be null (the `default` agent)
            extra_json_schema={"extra": {"enum": [*agent_names, None]}},
        ),
    ]


def run_create_type(
    max_goal_chars: int, agent_names: tuple[str, ...] = ("default",), *, webhooks: bool = True
) -> type[RunCreate]:
    """RunCreate with the goal limit the server enforces, so the document and the decoder say the same.

    With webhooks off (no WEBHOOK_SECRET), `callback_url` may only be null.
    """
    goal = Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=max_goal_chars,
            description="The task, in plain words: not blank, no U+0000.",
            extra_json_schema={"extra": {"pattern": GOAL_PATTERN}},
        ),
    ]
    made = cast(
        type[RunCreate],
        msgspec.defstruct(
            "RunCreate",
            [
                ("goal", goal),
                ("agent", agent_name_type(agent_names) | None, None),
                ("callback_url", CallbackURLText | None if webhooks else NoCallbackURL, None),
            ],
            bases=(RunCreate,),
            kw_only=True,
            forbid_unknown_fields=True,
            module=__name__,
        ),
    )
    made.__doc__ = RunCreate.__doc__
    return made


class Usage(msgspec.Struct, kw_only=True):
    """Tokens spent."""

    input_tokens: int
    output_tokens: int


class RunLinks(msgspec.Struct, kw_only=True):
    """Where to read more, and act."""

    self: str
    trace: str
    cancel: str
    approvals: str
    tool_outputs: str
    webhooks: str


class CallAnswerView(msgspec.Struct, kw_only=True):
    """The answer a waiting call got."""

    decision: Literal["approve", "reject", "output"]
    answered_at: datetime
    reason: str | None = None


class PendingCallView(msgspec.Struct, kw_only=True):
    """A call the run waits on: approve or reject it (`approval`), or post its output (`client_tool`)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    digest: str
    kind: Literal["approval", "client_tool"]
    answer: CallAnswerView | None


class RequiredActionView(msgspec.Struct, kw_only=True):
    """What a run in `requires_action` waits on, and until when (APPROVAL_TTL_S; then it ends `expired`)."""

    calls: list[PendingCallView]
    requested_at: datetime
    expires_at: datetime


class ApprovalCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/runs/{id}/approvals: approve or reject one waiting call, named by its id and digest."""

    call_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The call's `call_id`.")]
    digest: Annotated[
        str,
        msgspec.Meta(
            min_length=1, max_length=128, description="The call's `digest` as the run shows it: binds the approval."
        ),
    ]
    decision: Literal["approve", "reject"]
    reason: (
        Annotated[str, msgspec.Meta(max_length=2000, description="Why (a rejection's reason is shown to the model).")]
        | None
    ) = None


class ToolOutputCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/runs/{id}/tool_outputs: the output of a client tool's call (text, or any JSON, sent as JSON text)."""

    call_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256, description="The call's `call_id`.")]
    output: Any
    digest: (
        Annotated[str, msgspec.Meta(min_length=1, max_length=128, description="The call's `digest`, if checked.")]
        | None
    ) = None


class RunView(msgspec.Struct, kw_only=True):
    """A run: its status, answer and what it cost."""

    id: str
    status: StatusText
    goal: str
    session_id: str | None
    answer: str | None
    output: Any
    failure_reason: str | None
    max_steps: int
    token_budget: int | None
    cost_budget: float | None
    usage: Usage
    cost_usd: float | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    links: RunLinks
    agent: str
    agent_version: str | None
    required_action: RequiredActionView | None = None
    approval_required: list[str] = []
    client_tools: list[str] = []
    callback_url: str | None = None


class ToolCallView(msgspec.Struct, kw_only=True):
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any]


class RunListView(msgspec.Struct, kw_only=True):
    """A page of runs, newest first; `next` is the link to the page after it (null on the last)."""

    runs: list[RunView]
    next_cursor: str | None
    next: str | None


class MessageView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A message as it was sent to the model (redacted where the server is configured to)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCallView] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class StoredMessageView(msgspec.Struct, kw_only=True):
    """One message of a run's conversation: its place (`seq`, from 1), its digest and the message."""

    seq: int
    digest: str
    message: MessageView


class LLMRequestView(msgspec.Struct, kw_only=True):
    """What an LLM call sent: the run's messages 1..`message_count` and the tool set `tools_digest`."""

    message_count: int
    tools_digest: str | None
    provider: str
    model: str
    parameters: dict[str, Any]
    payloads: bool


class LLMResponseMetaView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the provider said about its answer."""

    id: str | None = None
    model: str | None = None
    finish_reason: str | None = None


class SessionView(msgspec.Struct, kw_only=True):
    """A session's history: what the next run with this session id continues from."""

    session_id: str
    messages: list[MessageView]


class ToolResultView(msgspec.Struct, kw_only=True):
    """What a tool call returned."""

    ok: bool
    output: str
    error: str | None
    truncated: bool


class StepView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step of a trace: an LLM call (`kind=llm`) or a tool call (`kind=tool`)."""

    step_no: int
    kind: Literal["llm", "tool"]
    created_at: datetime
    latency_ms: float
    input_tokens: int
    output_tokens: int
    text: str | None = None
    tool_calls: list[ToolCallView] | None = None
    finish_reason: str | None = None
    attempts: int | None = None
    error: str | None = None
    error_type: str | None = None
    cost_usd: float | None = None
    request: LLMRequestView | None = None
    response: LLMResponseMetaView | None = None
    tool_name: str | None = None
    call_id: str | None = None
    arguments: dict[str, Any] | None = None
    result: ToolResultView | None = None


class ToolView(msgspec.Struct, kw_only=True):
    """A registered tool as models see it."""

    name: str
    description: str
    parameters: dict[str, Any]


class TraceView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A run's steps in order, the agent (and its profile's version) it ran with; with `include=prompts`,
    also what its LLM calls sent.

    Each message is listed once (`messages`, by `seq`) and each tool set once (`tool_sets`, by
    digest): LLM step N sent `messages[0:steps[N].request.message_count]` and
    `tool_sets[steps[N].request.tools_digest]`.
    """

    run_id: str
    status: StatusText
    steps: list[StepView]
    agent: str
    agent_version: str | None
    cost_usd: float | None = None
    messages: list[StoredMessageView] | None = None
    tool_sets: dict[str, list[ToolView]] | None = None


class HealthView(msgspec.Struct, kw_only=True):
    """Liveness and each dependency's state."""

    status: Literal["ok", "degraded"]
    checks: dict[str, str]


def run_links(url: str) -> RunLinks:
    """The links of the run at `url`."""
    return RunLinks(
        self=url,
        trace=f"{url}/trace",
        cancel=f"{url}/cancel",
        approvals=f"{url}/approvals",
        tool_outputs=f"{url}/tool_outputs",
        webhooks=f"{url}/webhooks",
    )


def _action_view(action: RequiredAction | None) -> RequiredActionView | None:
    if action is None:
        return None
    return RequiredActionView(
        calls=[
            PendingCallView(
                call_id=call.call_id,
                name=call.name,
                arguments=call.arguments,
                digest=call.digest,
                kind=call.kind.value,
                answer=None
                if call.answer is None
                else CallAnswerView(
                    decision=call.answer.decision.value, answered_at=call.answer.answered_at, reason=call.answer.reason
                ),
            )
            for call in action.calls
        ],
        requested_at=action.requested_at,
        expires_at=action.expires_at,
    )


def run_view(run: Run, base: str = "/v1/runs") -> RunView:
    """The wire view of a run."""
    url = f"{base}/{run.id}"
    return RunView(
        id=run.id,
        status=run.status.value,
        goal=run.goal,
        session_id=run.session_id,
        answer=run.answer,
        output=run.output,
        failure_reason=run.failure_reason,
        max_steps=run.max_steps,
        token_budget=run.token_budget,
        cost_budget=run.cost_budget,
        usage=Usage(input_tokens=run.input_tokens, output_tokens=run.output_tokens),
        cost_usd=run.cost_usd,
        cancel_requested=run.cancel_requested,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        links=run_links(url),
        required_action=_action_view(run.action) if run.status is RunStatus.REQUIRES_ACTION else None,
        approval_required=list(run.approval_required),
        client_tools=[tool.name for tool in run.client_tools],
        callback_url=run.callback_url,
        agent=run.agent,
        agent_version=run.agent_version,
    )


def step_view(step: Step) -> StepView:
    """The wire view of a step."""
    if isinstance(step, LLMStep):
        return StepView(
            step_no=step.step_no,
            kind="llm",
            created_at=step.created_at,
            latency_ms=round(step.latency_ms, 3),
            input_tokens=step.usage.input_tokens,
            output_tokens=step.usage.output_tokens,
            text=step.text or None,
            tool_calls=[ToolCallView(id=c.id, name=c.name, arguments=c.arguments) for c in step.tool_calls] or None,
            finish_reason=step.finish_reason.value if step.finish_reason else None,
            attempts=step.attempts,
            error=step.error,
            error_type=step.error_type,
            cost_usd=step.cost_usd,
            request=None
            if step.prompt is None
            else LLMRequestView(
                message_count=step.prompt.message_count,
                tools_digest=step.prompt.tools_digest,
                provider=step.prompt.provider,
                model=step.prompt.model,
                parameters=step.prompt.parameters,
                payloads=step.prompt.payloads,
            ),
            response=LLMResponseMetaView(
                id=step.response_id, model=step.response_model, finish_reason=step.provider_finish_reason
            )
            if step.response_id or step.response_model or step.provider_finish_reason
            else None,
        )
    result = step.result
    return StepView(
        step_no=step.step_no,
        kind="tool",
        created_at=step.created_at,
        latency_ms=round(step.latency_ms, 3),
        input_tokens=0,
        output_tokens=0,
        tool_name=step.tool_name,
        call_id=step.call_id,
        arguments=step.arguments,
        result=ToolResultView(ok=result.ok, output=result.output, error=result.error, truncated=result.truncated),
    )


def message_view(message: Message) -> MessageView:
    """The wire view of a message."""
    calls = [ToolCallView(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]
    return MessageView(
        role=message.role,
        content=message.content,
        tool_calls=calls or None,
        tool_call_id=message.tool_call_id,
        name=message.name,
    )


def trace_view(run: Run, steps: list[Step], prompts: RunPrompts | None = None) -> TraceView:
    """The wire view of a trace, with what the LLM calls sent when `prompts` is given."""
    view = TraceView(
        run_id=run.id,
        status=run.status.value,
        steps=[step_view(step) for step in steps],
        agent=run.agent,
        agent_version=run.agent_version,
    )
    view.cost_usd = run.cost_usd
    if prompts is not None:
        view.messages = [
            StoredMessageView(seq=stored.seq, digest=stored.digest, message=message_view(stored.message))
            for stored in prompts.messages
        ]
        view.tool_sets = {digest: [tool_view(s) for s in schemas] for digest, schemas in prompts.tool_sets.items()}
    return view


def tool_view(schema: ToolSchema) -> ToolView:
    """The wire view of a tool."""
    return ToolView(name=schema.name, description=schema.description, parameters=schema.parameters)
