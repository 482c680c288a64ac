"""Typed final output: a built-in `final_result` tool whose parameters are the output schema.

A run that asks for structured output gets this tool added; the run ends when the model calls
it with arguments that validate, and the validated value becomes the run's output.
"""

from typing import Any

import msgspec

from agentkit.application.tools.output_schema import struct_from_json_schema
from agentkit.application.tools.schema import Signature, inline_refs
from agentkit.application.tools.tool import Tool

__all__ = ["FINAL_RESULT", "final_result_tool", "struct_from_json_schema"]

FINAL_RESULT = "final_result"
_DESCRIPTION = "Give the final answer in the required structure. Call this once, when you have the answer."


def final_result_tool(output: type[msgspec.Struct] | dict[str, Any]) -> Tool[..., Any]:
    """The `final_result` tool for an output given as a Struct type or as a JSON schema object.

    With a Struct type the output is an instance of it; with a JSON schema it is plain JSON data.

    Raises:
        ValueError: the JSON schema is not an object schema this runtime can validate (see
            `output_schema` for what it accepts); the message names the path.
    """
    if isinstance(output, dict):
        struct_type = struct_from_json_schema(output)
        as_plain = True
    else:
        struct_type, as_plain = output, False
    fields = msgspec.structs.fields(struct_type)
    parameters = inline_refs(msgspec.json.schema(struct_type))
    parameters.pop("title", None)
    parameters.pop("description", None)
    signature = Signature(
        args_type=struct_type,
        param_names=tuple(field.name for field in fields),
        context_param=None,
        context_type=None,
        parameters=parameters,
    )

    def final_result(**values: Any) -> Any:
        value = struct_type(**values)
        return msgspec.to_builtins(value) if as_plain else value

    # our own code building a value: it stays in this process, whatever TOOL_ISOLATION says
    return Tool(
        final_result,
        name=FINAL_RESULT,
        description=_DESCRIPTION,
        terminal=True,
        idempotent=True,
        isolation="thread",
        signature=signature,
    )
