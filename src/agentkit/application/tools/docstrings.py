"""Descriptions from docstrings in the Google, NumPy and reST styles."""

import inspect

import docstring_parser
import msgspec


class ParsedDocstring(msgspec.Struct, frozen=True, kw_only=True):
    """A tool's description and the description of each parameter."""

    description: str
    params: dict[str, str]


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into the tool description and per-parameter descriptions.

    The style (Google `Args:`, NumPy `Parameters`, reST `:param x:`) is detected from the text;
    a missing docstring gives empty descriptions.
    """
    if not doc:
        return ParsedDocstring(description="", params={})
    parsed = docstring_parser.parse(inspect.cleandoc(doc))
    parts = [part for part in (parsed.short_description, parsed.long_description) if part]
    params = {param.arg_name: " ".join(param.description.split()) for param in parsed.params if param.description}
    return ParsedDocstring(description="\n\n".join(parts).strip(), params=params)
