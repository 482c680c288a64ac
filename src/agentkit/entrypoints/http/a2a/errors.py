"""AgentKit's errors as A2A's: what a JSON-RPC client reads in `error` (never an HTTP 500)."""

import contextlib
from collections.abc import Iterator

from a2a.utils.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    TaskNotFoundError,
)

from agentkit.application.errors import (
    ApplicationError,
    CursorNotFound,
    IdempotencyMismatch,
    InvalidCallbackURL,
    InvalidListing,
    RunConflict,
    RunNotFound,
    UnknownAgent,
    WebhooksNotConfigured,
)
from agentkit.domain.errors import DomainError

_INVALID = (
    UnknownAgent,
    InvalidListing,
    CursorNotFound,
    IdempotencyMismatch,
    InvalidCallbackURL,
    WebhooksNotConfigured,
)


@contextlib.contextmanager
def as_a2a_errors() -> Iterator[None]:
    """Raise AgentKit's errors inside as the A2A error a client understands.

    A run not found is TaskNotFound; a request the run cannot take (it waits on nothing, an answer does
    not fit its call) is an invalid request; what the request got wrong is invalid params; anything
    else the application raises (overload, rate limit, a store outage) an internal error naming it.
    """
    try:
        yield
    except A2AError:
        raise
    except RunNotFound as exc:
        raise TaskNotFoundError(message=str(exc)) from None
    except RunConflict as exc:
        raise InvalidRequestError(message=str(exc)) from None
    except (DomainError, *_INVALID) as exc:
        raise InvalidParamsError(message=str(exc)) from None
    except ApplicationError as exc:
        raise InternalError(message=f"{exc.code}: {exc}") from None
