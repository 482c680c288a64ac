"""The POST /v1/chat body: AgentKit's own (`message`) or the Vercel AI SDK's (`messages`), decoded strictly.

Both shapes become one `ChatRequest`. The body is read as `body.py` reads POST /v1/runs' (JSON only,
nested within bounds, `msgspec.convert(..., strict=True)`): a body with `messages` is `useChat`'s
(UIChatRequest), any other AgentKit's (ChatCreate). The document shows the two as `oneOf`.
"""

from typing import Any, ClassVar

import msgspec
from litestar.dto import AbstractDTO, DTOConfig
from litestar.openapi.spec import Reference, Schema
from litestar.typing import FieldDefinition

from agentkit.entrypoints.http.body import (
    MAX_JSON_DEPTH,
    body_validation_error,
    decode_error_detail,
    nesting_exceeds,
)
from agentkit.entrypoints.http.dto.chat import ChatCreate, chat_create_type
from agentkit.entrypoints.http.dto.ui_chat import UIChatRequest, UIMessageIn, ui_chat_type
from agentkit.entrypoints.http.problems import RequestRejected


class ChatRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A chat turn, whichever shape it came in.

    Attributes:
        message: What the user says.
        session_id: The conversation it continues (a new one when None).
        agent: The agent that answers (None: `default`).
        stream: The client asked for the turn's events (`"stream": true`).
        ui: It came from the AI SDK (`messages`): the answer is its UI message stream unless `format` says otherwise.
    """

    message: str
    session_id: str | None = None
    agent: str | None = None
    stream: bool = False
    ui: bool = False


class ChatBodyDTO(AbstractDTO[ChatRequest]):
    """Decodes and documents POST /v1/chat bodies; `for_settings` makes one for the app's limits and agents."""

    config: ClassVar[DTOConfig] = DTOConfig()
    plain_type: ClassVar[type[ChatCreate]] = ChatCreate
    ui_type: ClassVar[type[UIChatRequest]] = UIChatRequest
    max_goal_chars: ClassVar[int] = 8000

    @classmethod
    def for_settings(cls, max_goal_chars: int, agent_names: tuple[str, ...]) -> type["ChatBodyDTO"]:
        """A DTO for these limits and agents (the document and the decoder say the same)."""
        attributes = {
            "plain_type": chat_create_type(max_goal_chars, agent_names),
            "ui_type": ui_chat_type(max_goal_chars, agent_names),
            "max_goal_chars": max_goal_chars,
        }
        return type("ChatBodyDTO", (cls,), attributes)

    def decode_bytes(self, value: bytes) -> Any:
        """The body as a ChatRequest, or a RequestRejected problem."""
        if nesting_exceeds(value, MAX_JSON_DEPTH):
            raise RequestRejected(
                400, "json_too_deep", "Malformed JSON", f"the JSON nests deeper than {MAX_JSON_DEPTH} levels"
            )
        try:
            raw = msgspec.json.decode(value)
            if isinstance(raw, dict) and "messages" in raw:
                return ui_turn(msgspec.convert(raw, type=self.ui_type, strict=True), self.max_goal_chars)
            plain = msgspec.convert(raw, type=self.plain_type, strict=True)
        except msgspec.ValidationError as exc:
            raise body_validation_error(str(exc)) from None
        except msgspec.DecodeError as exc:
            raise RequestRejected(400, "malformed_json", "Malformed JSON", decode_error_detail(exc, value)) from None
        return ChatRequest(message=plain.message, session_id=plain.session_id, agent=plain.agent, stream=plain.stream)

    def decode_builtins(self, value: dict[str, Any]) -> Any:
        """Not used: this DTO only reads JSON bytes."""
        raise NotImplementedError

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: Any = None
    ) -> None:
        """Nothing to prepare: decoding is msgspec's (Litestar's DTO backends are not used)."""

    @classmethod
    def generate_field_definitions(cls, model_type: type[Any]) -> Any:
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
        """One of the two bodies, neither taking fields it does not name."""
        shapes: list[Reference | Schema] = []
        registry = schema_creator.schema_registry
        for body_type in (cls.plain_type, cls.ui_type):
            reference = schema_creator.for_field_definition(FieldDefinition.from_annotation(body_type))
            schema = registry.from_reference(reference).schema if isinstance(reference, Reference) else reference
            schema.additional_properties = False
            shapes.append(reference)
        return Schema(one_of=shapes)


def ui_turn(request: UIChatRequest, max_goal_chars: int) -> ChatRequest:
    """The turn `useChat` asks for: the newest user message's text, in the chat's session.

    Raises:
        RequestRejected: a part without a `type`, a user message without text (or with text too long or
            holding U+0000), or no user message at all (422, naming where).
    """
    turn: list[str] | None = None
    for index, message in enumerate(request.messages):
        for number, part in enumerate(message.parts):
            if not isinstance(part.get("type"), str):
                raise _invalid(f"messages[{index}].parts[{number}].type", "a part needs a `type` (a string)")
        if message.role == "user":
            turn = _user_text(message, index, max_goal_chars)
    if turn is None:
        raise _invalid("messages", "no user message: the newest user message is the turn")
    return ChatRequest(message="\n".join(turn), session_id=request.id, agent=request.agent, ui=True)


def _user_text(message: UIMessageIn, index: int, max_goal_chars: int) -> list[str]:
    """The text parts of a user message (each text at most `max_goal_chars`, without U+0000; one not blank)."""
    texts: list[str] = []
    for number, part in enumerate(message.parts):
        if "text" not in part:
            continue
        text, where = part["text"], f"messages[{index}].parts[{number}].text"
        if not isinstance(text, str):
            raise _invalid(where, "Expected `str`")
        if len(text) > max_goal_chars:
            raise _invalid(where, f"Expected `str` of length <= {max_goal_chars}")
        if "\x00" in text:
            raise _invalid(where, "contains U+0000; it must be text")
        if part["type"] == "text":
            texts.append(text)
    if not any(text.strip() for text in texts):
        raise _invalid(f"messages[{index}]", "a user message needs a text part that is not blank")
    return texts


def _invalid(key: str, message: str) -> RequestRejected:
    return RequestRejected(
        422,
        "validation_error",
        "Invalid request",
        f"body.{key}: {message}",
        errors=[{"message": message, "source": "body", "key": key}],
    )
