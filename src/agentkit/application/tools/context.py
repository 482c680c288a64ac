"""Hidden context: values a tool receives by type that the model never sees.

A tool asks for the base `ToolContext` (always available) or for a subclass of it; a subclass is
supplied by a context provider: a function from the base context to the subclass, marked with
`@context_provider` in a tool module (AGENTKIT_TOOL_MODULES) or given to `Agent`. A tool whose
context type no provider supplies is refused when it is registered, not when the model calls it.

    class ActionContext(ToolContext):
        database_url: str
        api_key: str

    @context_provider
    def action_context(base: ToolContext) -> ActionContext:
        return extend(base, ActionContext, database_url=PAPERS_DB, api_key=PAPERS_KEY)
"""

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast, get_type_hints

import msgspec

from agentkit.application.errors import ToolRegistrationError
from agentkit.domain.ids import OwnerId, RunId, SessionId, ToolCallId

C = TypeVar("C", bound="ToolContext")


class ToolContext(msgspec.Struct, frozen=True, kw_only=True):
    """What the runtime knows about the call in progress.

    A tool asks for it by annotating a parameter with `ToolContext` (or a subclass); that
    parameter is left out of the tool's schema and filled in at execution. Subclass it to hand
    tools your own clients and secrets, and supply the subclass with a `@context_provider`.

    Attributes:
        run_id: The run the call belongs to.
        owner: The API key id (or local user) that owns the run.
        session_id: The conversation the run continues, if any.
        call_id: The tool call being executed (the model's id for it; stable across a resume).
        idempotency_key: A key unique to this call and the same if the call is ever made again (a
            resumed run): pass it to the APIs a tool calls (an `Idempotency-Key` header, say) so a
            repeated call is recognised there.
    """

    run_id: RunId
    owner: OwnerId
    session_id: SessionId | None = None
    call_id: ToolCallId | None = None
    idempotency_key: str | None = None


def extend(base: ToolContext, kind: type[C], **values: Any) -> C:
    """A `kind` context carrying the base context's fields and these values."""
    return kind(**msgspec.structs.asdict(base), **values)


class ContextProvider(Generic[C]):
    """Builds one ToolContext subclass from the base context, for every tool call that asks for it.

    Attributes:
        supplies: The subclass it builds (the function's return annotation).
        build: The function.
    """

    def __init__(self, build: Callable[[ToolContext], C], supplies: type[C]) -> None:
        self.build = build
        self.supplies = supplies

    def __call__(self, base: ToolContext) -> C:
        """Build the context for one call."""
        return self.build(base)

    def __repr__(self) -> str:
        return f"ContextProvider({self.supplies.__name__})"


def context_provider(build: Callable[[ToolContext], C]) -> ContextProvider[C]:
    """Mark a function `(base: ToolContext) -> MyContext` as the supplier of `MyContext`.

    Raises:
        ToolRegistrationError: the function's return annotation is not a ToolContext subclass.
    """
    try:
        supplies = get_type_hints(build).get("return")
    except Exception as exc:
        raise ToolRegistrationError(
            f"context provider {build.__name__!r}: cannot resolve its type hints: {exc}"
        ) from None
    if not (isinstance(supplies, type) and issubclass(supplies, ToolContext) and supplies is not ToolContext):
        raise ToolRegistrationError(
            f"context provider {build.__name__!r} must be annotated to return a ToolContext subclass"
        )
    # the return annotation is the C of `build`; mypy cannot see that through get_type_hints
    return ContextProvider(build, cast(type[C], supplies))


def for_call(context: ToolContext, call_id: ToolCallId) -> ToolContext:
    """The run's base context for one call: with the call's id and its idempotency key."""
    return msgspec.structs.replace(context, call_id=call_id, idempotency_key=f"{context.run_id}:{call_id}")
