"""Argument Structs and JSON schemas built from a function's signature and docstring."""

import copy
import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import msgspec

from agentkit.application.errors import ToolRegistrationError
from agentkit.application.tools.context import ToolContext


class Signature(msgspec.Struct, frozen=True, kw_only=True):
    """What the registry needs to call a function with validated model arguments.

    Attributes:
        args_type: A Struct with one field per model-visible parameter; validation is `msgspec.convert`.
        param_names: The model-visible parameters, in order.
        context_param: The parameter that receives the hidden context, if any.
        context_type: Its annotated type (ToolContext or a subclass).
        parameters: The JSON schema of the arguments, `$defs` inlined.
    """

    args_type: type[msgspec.Struct]
    param_names: tuple[str, ...]
    context_param: str | None
    context_type: type[ToolContext] | None
    parameters: dict[str, Any]


def build_signature(fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> Signature:
    """Build the argument Struct and the JSON schema of `fn`'s parameters.

    Raises:
        ToolRegistrationError: for *args/**kwargs, positional-only parameters, more than one context
            parameter, unresolvable annotations, or types msgspec cannot validate.
    """
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolRegistrationError(f"tool {name!r}: cannot resolve its type hints: {exc}") from None
    fields: list[tuple[str, Any, Any]] = []
    context_param: str | None = None
    context_type: type[ToolContext] | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolRegistrationError(f"tool {name!r}: parameter {param.name!r} must be a named parameter")
        annotation = hints.get(param.name, Any)
        wanted = _context_type(annotation)
        if wanted is not None:
            if context_param is not None:
                raise ToolRegistrationError(f"tool {name!r}: only one parameter may take the ToolContext")
            context_param, context_type = param.name, wanted
            continue
        fields.append(_field(param, annotation, param_docs.get(param.name)))
    try:
        args_type = msgspec.defstruct(
            _struct_name(name), fields, kw_only=True, forbid_unknown_fields=True, module=__name__
        )
        parameters = inline_refs(msgspec.json.schema(args_type))
    except (TypeError, ValueError) as exc:
        raise ToolRegistrationError(f"tool {name!r}: unsupported parameter type: {exc}") from None
    parameters.pop("title", None)
    return Signature(
        args_type=args_type,
        param_names=tuple(field[0] for field in fields),
        context_param=context_param,
        context_type=context_type,
        parameters=parameters,
    )


def _context_type(annotation: Any) -> type[ToolContext] | None:
    """The ToolContext type a parameter asks for (`Ctx` or `Ctx | None`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, ToolContext):
        return annotation
    members = [arg for arg in get_args(annotation) if arg is not type(None)]
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], ToolContext):
        return members[0]
    return None


def _field(param: inspect.Parameter, annotation: Any, doc: str | None) -> tuple[str, Any, Any]:
    if doc and not _has_description(annotation):
        annotation = Annotated[annotation, msgspec.Meta(description=doc)]
    if param.default is inspect.Parameter.empty:
        return (param.name, annotation, msgspec.NODEFAULT)
    default: Any = param.default
    if isinstance(default, list | dict | set) and default:
        # msgspec copies only empty mutable defaults; give a non-empty one a factory.
        return (param.name, annotation, msgspec.field(default_factory=functools.partial(copy.deepcopy, default)))
    return (param.name, annotation, default)


def _has_description(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(meta, msgspec.Meta) and meta.description for meta in get_args(annotation)[1:])


def _struct_name(tool_name: str) -> str:
    return "".join(part.capitalize() for part in tool_name.replace("-", "_").split("_") if part) + "Args"


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every `$ref` with the definition it points to and drop `$defs`.

    Providers such as Gemini reject `$ref`; a recursive type cannot be inlined and raises ValueError.
    """
    defs: dict[str, Any] = schema.get("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                key = ref.rsplit("/", 1)[-1]
                if key in seen:
                    raise ValueError(f"recursive type {key!r} cannot be inlined")
                target = resolve(defs[key], (*seen, key))
                extra = {k: resolve(v, seen) for k, v in node.items() if k not in ("$ref", "$defs")}
                return {**target, **extra}
            return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        return node

    resolved = resolve(schema, ())
    if not isinstance(resolved, dict):  # pragma: no cover - msgspec always returns an object
        raise ValueError("schema is not an object")
    return resolved
