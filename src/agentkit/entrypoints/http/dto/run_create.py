"""POST /v1/runs: the request body, and the subclass the server decodes for its settings."""

from typing import Annotated, Any, Final, cast

import msgspec

from agentkit.application.runs.create_run import MAX_COST_BUDGET, MAX_TOKEN_BUDGET, MIN_COST_BUDGET
from agentkit.entrypoints.http.dto.fields import GOAL_PATTERN, AgentNameText, SessionIdText, agent_name_type

MAX_STEPS_ASKED: Final = 1000
MAX_TOOLS_ASKED: Final = 64
# What providers accept as a tool name, as JSON Schema writes it (the decoder's own pattern ends in \Z)
TOOL_NAME_PATTERN: Final = r"^[A-Za-z_][A-Za-z0-9_-]*$"

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
    stream: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Answer with the run's Server-Sent Events from its start to its end (as `Accept: "
                "text/event-stream` does) instead of JSON; its model's answers stream as they are written."
            )
        ),
    ] = False


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
