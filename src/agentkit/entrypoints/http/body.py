"""The POST /v1/runs body: JSON only, nested within bounds, decoded strictly into RunCreate.

Litestar decodes a msgspec body into builtins and converts them with `strict=False`, so `"5"` became
5 and a body nested 5,000 levels deep raised RecursionError inside the decoder. This DTO takes the
raw bytes instead, in this order:

1. (`check_body`, the route's before-request hook, so it holds for an empty body too) the media type:
   `application/json` (with an optional `charset=utf-8`) or none at all, since many clients send
   JSON without naming it; anything else is a 415. An empty body is a 400;
2. the nesting depth: at most MAX_JSON_DEPTH levels (a 400), found by a scan that costs nothing for
   ordinary bodies and never recurses;
3. `msgspec.json.decode`, then `msgspec.convert(..., strict=True)`: malformed JSON is a 400, a body
   that does not validate a 422 naming the field (`body.max_steps: Expected `int | null`, got `str``).
   Strict, but JSON's own number model holds: 5.0 is the integer 5 (as JSON Schema says), "5" is
   not a number at all.

The DTO also writes the request body's OpenAPI schema, with the output-schema language of
`schema_doc` in place of a bare `object`.
"""

import re
from collections.abc import Generator
from typing import Any, ClassVar, Final

import msgspec
from litestar import Request
from litestar.dto import AbstractDTO, DTOConfig, DTOFieldDefinition
from litestar.openapi.spec import OpenAPIType, Reference, Schema
from litestar.typing import FieldDefinition

from agentkit.entrypoints.http.dto.run_create import RunCreate
from agentkit.entrypoints.http.problems import RequestRejected
from agentkit.entrypoints.http.schema_doc import output_schema_reference

MAX_JSON_DEPTH: Final = 64
"""Levels of arrays and objects a request body may nest (an output schema may use up to 32 of them)."""
_BRACKETS: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_INTEGER_FIELDS: Final = ("max_steps", "token_budget")
_JSON_MEDIA_TYPE: Final = re.compile(r"^application/json\s*(;\s*charset\s*=\s*\"?utf-8\"?\s*)?$", re.IGNORECASE)


def nesting_exceeds(body: bytes, limit: int) -> bool:
    """Whether JSON text nests arrays and objects more than `limit` levels deep (brackets in strings do not count).

    A body cannot nest deeper than it has opening brackets, so the common case is two `count`s.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for token in _BRACKETS.finditer(body):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif bracket in (b"]", b"}"):
            depth -= 1
    return False


def decode_error_detail(exc: msgspec.DecodeError, body: bytes) -> str:
    """msgspec's reason, in words for the person who sent the body."""
    message = str(exc)
    if message == "Input data was truncated":  # msgspec's words for JSON that stops before it is whole
        return f"the JSON ends before it is complete (after {len(body)} bytes): a string, object or array is not closed"
    return message


async def check_body(request: Request[Any, Any, Any]) -> None:
    """Before-request hook: a JSON body (or one without a media type), not an empty one."""
    media_type = request.headers.get("content-type")
    if media_type is not None and not _JSON_MEDIA_TYPE.match(media_type.strip()):
        raise RequestRejected(
            415,
            "unsupported_media_type",
            "Unsupported media type",
            f"send the body as application/json (UTF-8), not {media_type[:100]!r}",
        )
    if not await request.body():
        raise RequestRejected(400, "missing_body", "Malformed request", "the request has no body; send a JSON object")


async def check_json_body(request: Request[Any, Any, Any]) -> None:
    """Before-request hook for bodies Litestar decodes itself: `check_body`, and no JSON nested too deep."""
    await check_body(request)
    if nesting_exceeds(await request.body(), MAX_JSON_DEPTH):
        raise RequestRejected(
            400, "json_too_deep", "Malformed JSON", f"the JSON nests deeper than {MAX_JSON_DEPTH} levels"
        )


class RunCreateDTO(AbstractDTO[RunCreate]):
    """Decodes and documents POST /v1/runs bodies; `for_type` makes one for the app's RunCreate type."""

    config: ClassVar[DTOConfig] = DTOConfig()
    body_type: ClassVar[type[RunCreate]] = RunCreate

    @classmethod
    def for_type(cls, body_type: type[RunCreate]) -> type["RunCreateDTO"]:
        """A DTO decoding into `body_type` (RunCreate with the app's limits)."""
        return type("RunCreateDTO", (cls,), {"body_type": body_type})

    def decode_bytes(self, value: bytes) -> Any:
        """The body as a RunCreate, or a RequestRejected problem."""
        if nesting_exceeds(value, MAX_JSON_DEPTH):
            raise RequestRejected(
                400, "json_too_deep", "Malformed JSON", f"the JSON nests deeper than {MAX_JSON_DEPTH} levels"
            )
        try:
            raw = msgspec.json.decode(value)
            if isinstance(raw, dict):
                for name in _INTEGER_FIELDS:
                    number = raw.get(name)
                    if isinstance(number, float) and number.is_integer():
                        raw[name] = int(number)
            return msgspec.convert(raw, type=self.body_type, strict=True)
        except msgspec.ValidationError as exc:  # also numbers JSON can write and no machine can hold (1e400)
            raise body_validation_error(str(exc)) from None
        except msgspec.DecodeError as exc:
            raise RequestRejected(400, "malformed_json", "Malformed JSON", decode_error_detail(exc, value)) from None

    def decode_builtins(self, value: dict[str, Any]) -> Any:
        """Not used: this DTO only reads JSON bytes."""
        raise NotImplementedError

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: Any = None
    ) -> None:
        """Nothing to prepare: decoding is one msgspec call (Litestar's DTO backends are not used)."""

    @classmethod
    def generate_field_definitions(cls, model_type: type[Any]) -> Generator[DTOFieldDefinition, None, None]:
        """Not used: this DTO does not transform fields."""
        yield from ()

    @classmethod
    def detect_nested_field(cls, field_definition: FieldDefinition) -> bool:
        """Not used: this DTO does not transform fields."""
        return False

    @classmethod
    def create_openapi_schema(
        cls, field_definition: FieldDefinition, handler_id: str, schema_creator: Any
    ) -> Reference | Schema:
        """RunCreate's schema, with `output_schema` described by the output-schema language."""
        body = FieldDefinition.from_annotation(cls.body_type, kwarg_definition=field_definition.kwarg_definition)
        reference: Reference | Schema = schema_creator.for_field_definition(body)
        registry = schema_creator.schema_registry
        schema: Schema = registry.from_reference(reference).schema if isinstance(reference, Reference) else reference
        if schema.properties is not None:
            schema.properties["output_schema"] = Schema(
                one_of=[output_schema_reference(registry), Schema(type=OpenAPIType.NULL)]
            )
        return reference


def body_validation_error(message: str) -> RequestRejected:
    """msgspec's `Expected `int`, got `str` - at `$.max_steps`` as `body.max_steps: Expected `int`, got `str``."""
    text, _, where = message.partition(" - at `$")
    key = where.rstrip("`").lstrip(".")
    detail = f"body.{key}: {text}" if key else f"body: {text}"
    error: dict[str, Any] = {"message": text, "source": "body"}
    if key:
        error["key"] = key
    return RequestRejected(422, "validation_error", "Invalid request", detail, errors=[error])
