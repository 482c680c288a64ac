"""`@tool`: a plain typed function becomes a tool the model can call."""

import inspect
import re
import sys
from collections.abc import Callable
from typing import Any, Generic, Literal, ParamSpec, TypeVar, overload

from agentkit.application.errors import ToolRegistrationError
from agentkit.application.ports.tool_sandbox import FunctionRef
from agentkit.application.tools.context import ToolContext
from agentkit.application.tools.docstrings import parse_docstring
from agentkit.application.tools.schema import Signature, build_signature
from agentkit.domain.tools import ToolSchema

P = ParamSpec("P")
_VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
R = TypeVar("R")
Isolation = Literal["thread", "process"]


class Tool(Generic[P, R]):
    """A function with everything the registry needs to offer it to a model and call it.

    The function stays callable as it was: `add(1, 2)` still returns 3.

    Attributes:
        name: The name the model calls it by.
        description: What it does, from the argument or the docstring.
        timeout_s: Its own time limit, or None for the registry's default.
        terminal: When true, a successful call ends the run with its return value as the output.
        idempotent: When true, calling it twice with the same arguments does no harm: a resumed run
            whose executor died during the call runs it again. When false (the default), such a run
            fails instead of risking a second side effect.
        requires_approval: When true, each call waits for a person's approval: the run pauses in
            `requires_action` until the call is approved (it runs) or rejected (the model reads why).
        sequential: When true, a call of it is a barrier among the calls of one model turn: the
            calls before it end first, it runs alone, then the calls after it start.
        isolation: Where a sync tool runs: `thread` (in this process), `process` (a worker process
            killed at the timeout, under CPU and memory limits), or None for the registry's choice
            (TOOL_ISOLATION). Async tools run on the event loop.
        schema: The name, description and JSON schema shown to models.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout_s: float | None = None,
        terminal: bool = False,
        idempotent: bool = False,
        requires_approval: bool = False,
        sequential: bool = False,
        isolation: Isolation | None = None,
        signature: Signature | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        if not _VALID_NAME.fullmatch(self.name):
            raise ToolRegistrationError(
                f"tool name {self.name!r} must be 1-64 ASCII letters, digits, '_' or '-', starting with a letter "
                "or '_' (providers require it)"
            )
        if timeout_s is not None and timeout_s <= 0:
            raise ToolRegistrationError(f"tool {self.name!r}: timeout must be positive, got {timeout_s}")
        docs = parse_docstring(fn.__doc__)
        self.description = description if description is not None else docs.description
        self.timeout_s = timeout_s
        self.terminal = terminal
        self.idempotent = idempotent
        self.requires_approval = requires_approval
        self.sequential = sequential
        self.is_async = inspect.iscoroutinefunction(fn)
        if isolation == "process":
            if self.is_async:
                raise ToolRegistrationError(
                    f"tool {self.name!r}: isolation='process' is for sync tools; an async tool is cancelled "
                    "at its timeout where it waits"
                )
            _check_importable(fn, self.name, "isolation='process'")
        self.isolation: Isolation | None = isolation
        signature = signature or build_signature(fn, self.name, docs.params)
        self.args_type = signature.args_type
        self.param_names = signature.param_names
        self.context_param: str | None = signature.context_param
        self.context_type: type[ToolContext] | None = signature.context_type
        self.schema = ToolSchema(name=self.name, description=self.description, parameters=signature.parameters)
        self.__doc__ = fn.__doc__
        self.__name__ = self.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the underlying function directly."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    terminal: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    sequential: bool = False,
    isolation: Isolation | None = None,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    terminal: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    sequential: bool = False,
    isolation: Isolation | None = None,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Make a tool of a typed function, bare (`@tool`) or with options (`@tool(name=..., timeout=...)`).

    The schema comes from the type hints and the docstring (Google, NumPy or reST); a parameter
    annotated with `ToolContext` (or a subclass) is hidden from the model and injected at run time.

    Args:
        fn: The function, when used bare.
        name: The name the model sees (default: the function's name).
        description: The description the model sees (default: the docstring's text).
        timeout: Seconds the tool may run (default: TOOL_TIMEOUT_S).
        terminal: End the run with this tool's return value when it succeeds.
        idempotent: Safe to run again with the same arguments (a resumed run may repeat a call whose
            result was not stored); tools with side effects leave it false and use the context's
            `idempotency_key` with the APIs they call.
        requires_approval: Each call waits for a person's approval (POST /v1/runs/{id}/approvals);
            the run holds no executor meanwhile.
        sequential: Make each call a barrier among the calls of one model turn (which otherwise run
            at once): the calls before it end first, it runs alone, the calls after it wait for it.
        isolation: `process` runs a sync tool in a worker process that is killed at its timeout,
            under CPU and memory limits and without the service's environment (the function must
            live at the top level of a module: the process imports it by name); `thread` keeps it
            in this process whatever TOOL_ISOLATION says; unset follows TOOL_ISOLATION.

    Raises:
        ToolRegistrationError: the function cannot be a tool (see the message).
    """
    if fn is not None:
        return Tool(fn)

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        return Tool(
            func,
            name=name,
            description=description,
            timeout_s=timeout,
            terminal=terminal,
            idempotent=idempotent,
            requires_approval=requires_approval,
            sequential=sequential,
            isolation=isolation,
        )

    return decorate


def function_ref(item: "Tool[..., Any]", why: str) -> FunctionRef:
    """The names a worker process imports the tool's function by, checked against this process.

    The module's name must lead back to the function (or to a tool around it): that is what a
    fresh process finds when it imports it.

    Raises:
        ToolRegistrationError: it cannot be found by name (defined inside a function, in `__main__`,
            or its name bound to something else).
    """
    fn = item.fn
    _check_importable(fn, item.name, why)
    found: Any = sys.modules.get(fn.__module__)
    for part in fn.__qualname__.split("."):
        found = getattr(found, part, None)
    if found is not fn and getattr(found, "fn", None) is not fn:
        raise ToolRegistrationError(
            f"tool {item.name!r}: {why} needs the function to be found by its name, and "
            f"{fn.__module__}.{fn.__qualname__} is something else"
        )
    return FunctionRef(fn.__module__, fn.__qualname__)


def _check_importable(fn: Callable[..., Any], name: str, why: str) -> None:
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<locals>" in qualname or "<lambda>" in qualname:
        raise ToolRegistrationError(
            f"tool {name!r}: {why} runs it in a worker process, which imports it by name: define it at the "
            "top level of a module (not inside a function or in the script being run)"
        )
