"""Neutral tool types: the schema shown to a model and the result of running a tool."""

from typing import Any

import msgspec

# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class ToolSchema(msgspec.Struct, frozen=True, kw_only=True):
    """A tool as a model sees it: a name, a description and a JSON schema of its parameters.

    Each provider adapter converts this to its own tool-declaration format.
    """

    name: str
    description: str
    parameters: dict[str, Any]


class ToolResult(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The outcome of one tool call; errors are data the model can read, never exceptions.

    Attributes:
        ok: Whether the tool ran and returned normally.
        output: The tool's output as text (possibly truncated).
        error: A message the model can act on when `ok` is false.
        truncated: Whether `output` was cut to the configured limit.
        latency_ms: Wall time of the call in milliseconds.
        value: The tool's return value before it was turned into text (not sent to the model);
            the typed final output of a run comes from here.
    """

    ok: bool
    output: str = ""
    error: str | None = None
    truncated: bool = False
    latency_ms: float = 0.0
    value: Any = None

    def model_text(self) -> str:
        """The text that goes into the tool-role message for the model."""
        if self.ok:
            return self.output + ("\n[output truncated]" if self.truncated else "")
        return f"ERROR: {self.error}"
