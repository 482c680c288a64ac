"""`agentkit tools` as rows a person reads: each tool's parameters from its JSON schema, and what is left out."""

from collections.abc import Sequence
from typing import Any

import msgspec

from agentkit.domain.tools import ToolSchema


class Parameter(msgspec.Struct, frozen=True, kw_only=True):
    """One parameter of a tool, as `agentkit tools` shows it."""

    name: str
    type: str
    required: bool
    default: str | None
    description: str


def parameters(schema: ToolSchema) -> list[Parameter]:
    """The tool's parameters in schema order, with their types in short JSON-schema words."""
    required = set(schema.parameters.get("required", ()))
    listed: list[Parameter] = []
    for name, prop in schema.parameters.get("properties", {}).items():
        default = msgspec.json.encode(prop["default"]).decode() if "default" in prop else None
        listed.append(
            Parameter(
                name=name,
                type=type_words(prop),
                required=name in required,
                default=default,
                description=" ".join(str(prop.get("description", "")).split()),
            )
        )
    return listed


def type_words(prop: dict[str, Any]) -> str:
    """A property's type in a few words: `string`, `integer 1..7`, `one of "EUR", "USD"`, `array of string`."""
    if "enum" in prop:
        return "one of " + ", ".join(msgspec.json.encode(value).decode() for value in prop["enum"])
    if "const" in prop:
        return msgspec.json.encode(prop["const"]).decode()
    for union in ("anyOf", "oneOf"):
        if union in prop:
            return " | ".join(type_words(option) for option in prop[union])
    kind = prop.get("type", "any")
    words = " | ".join(kind) if isinstance(kind, list) else str(kind)
    if words == "array" and isinstance(prop.get("items"), dict):
        words = f"array of {type_words(prop['items'])}"
    low, high = prop.get("minimum", prop.get("exclusiveMinimum")), prop.get("maximum", prop.get("exclusiveMaximum"))
    if low is not None or high is not None:
        words += f" {'' if low is None else low}..{'' if high is None else high}"
    return words


def summary(schema: ToolSchema) -> str:
    """The first line of the tool's description."""
    lines = schema.description.strip().splitlines()
    return lines[0] if lines else ""


def plain_listing(schemas: Sequence[ToolSchema], absent: dict[str, str], limited: dict[str, str]) -> str:
    """The listing as plain text (pipes, files, dumb terminals)."""
    out: list[str] = []
    if not schemas:
        out.append("no tools registered (set AGENTKIT_TOOL_MODULES to add your own)")
    for schema in schemas:
        out.append(f"{schema.name}: {summary(schema)}")
        for param in parameters(schema):
            need = "required" if param.required else f"default {param.default}" if param.default else "optional"
            text = f"  {param.name} ({param.type}, {need})"
            out.append(f"{text}: {param.description}" if param.description else text)
        if schema.name in limited:
            out.append(f"  note: {limited[schema.name]}")
    for name, reason in absent.items():
        out.append(f"{name}: not available: {reason}")
    return "\n".join(out)
