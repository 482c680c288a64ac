"""An MCP server's tools as AgentKit tools: the server's schema shown to the model, calls sent to the server."""

import contextlib
import keyword
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as McpTool

from agentkit.application.tools.errors import ToolError
from agentkit.application.tools.schema import Signature, inline_refs
from agentkit.application.tools.tool import Tool

Caller = Callable[[str, dict[str, Any], float | None], Awaitable[CallToolResult]]


def mcp_tool(listed: McpTool, *, server: str, name: str, call: Caller, timeout_s: float | None) -> Tool[..., Any]:
    """The AgentKit tool for one listed MCP tool.

    The model sees the server's own JSON schema (with `$defs` inlined). The arguments are checked
    here for the properties the schema requires (a model that left one out learns it at once) and
    passed on as given; the server validates them in full and its refusal comes back as a tool error.

    Args:
        listed: The tool as the server listed it.
        server: The server's name (in error messages).
        name: The name the model calls it by (the server's prefix, then its own name).
        call: Sends a call to the server: (tool name on the server, arguments, timeout).
        timeout_s: The call's time limit (None: the registry's default).
    """
    schema = _parameters(listed.input_schema)
    signature, wire_names = _signature(name, schema)
    remote = listed.name

    async def call_server(**arguments: Any) -> Any:
        # the server's own property names, also those that are not Python identifiers
        given = {wire_names.get(key, key): value for key, value in arguments.items() if value is not msgspec.UNSET}
        result = await call(remote, given, timeout_s)
        return _result(result, server=server, tool=remote)

    return Tool(
        call_server,
        name=name,
        description=(listed.description or listed.title or f"{remote} (from the MCP server {server!r})").strip(),
        timeout_s=timeout_s,
        signature=signature,
    )


def _parameters(input_schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(input_schema) if isinstance(input_schema, dict) else {}
    # a recursive schema stays as the server gave it: providers that accept `$ref` still can
    with contextlib.suppress(KeyError, ValueError):
        schema = inline_refs(schema)
    schema.pop("title", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _signature(name: str, schema: dict[str, Any]) -> tuple[Signature, dict[str, str]]:
    """An argument Struct with one field per property (required ones must be there), and the wire names
    of the fields whose property name is not a Python identifier.

    Field values are not typed here (`Any`): the JSON schema is the server's, and the server checks it.
    """
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    for index, prop in enumerate(properties):
        attr = prop if prop.isidentifier() and not keyword.iskeyword(prop) else f"field_{index}"
        if attr != prop:
            rename[attr] = prop
        fields.append((attr, Any, msgspec.NODEFAULT if prop in required else msgspec.UNSET))
    closed = schema.get("additionalProperties") is False
    args_type = msgspec.defstruct(
        "McpArgs", fields, kw_only=True, forbid_unknown_fields=closed, rename=rename or None, module=__name__
    )
    signature = Signature(
        args_type=args_type,
        param_names=tuple(field[0] for field in fields),
        context_param=None,
        context_type=None,
        parameters=schema,
    )
    return signature, rename


def _result(result: CallToolResult, *, server: str, tool: str) -> Any:
    """What the model reads: the text the server returned (or its structured content as JSON).

    A result the server marked as an error becomes a tool error, its text kept for the model.
    """
    parts = [_content_text(block) for block in result.content]
    text = "\n".join(part for part in parts if part)
    if result.is_error:
        raise ToolError(f"the MCP tool {tool!r} of server {server!r} failed: {text or 'no detail given'}")
    if text:
        return text
    return result.structured_content


def _content_text(block: Any) -> str:
    if isinstance(block, TextContent):
        return block.text
    kind = getattr(block, "type", "content")
    return f"[{kind} content omitted]"
