"""Text types and patterns several wire shapes share."""

from typing import Annotated, Any, Final, Literal

import msgspec

from agentkit.application.agents.profile import AGENT_NAME_PATTERN

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
# Text without U+0000 (blank allowed).
NO_NUL_PATTERN: Final = f"^[^{_NUL}]*$"

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
    "waiting",
    "succeeded",
    "failed",
    "refused",
    "max_steps_exceeded",
    "timed_out",
    "cancelled",
    "expired",
]


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
