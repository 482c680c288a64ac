"""Every error as RFC 9457 problem details, mapped from domain and application errors in this one place."""

import contextlib
import math
import re
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from agentkit.application.errors import (
    ApplicationError,
    CursorNotFound,
    IdempotencyConflict,
    IdempotencyMismatch,
    InvalidCallbackURL,
    InvalidListing,
    Overloaded,
    RateLimited,
    RunConflict,
    RunNotFound,
    SessionNotFound,
    ShuttingDown,
    StoreUnavailable,
    UnknownAgent,
    WebhooksNotConfigured,
)
from agentkit.domain.errors import ActionRefused, DomainError, IllegalTransition, InvalidGoal, InvalidOutputSchema

logger = structlog.get_logger(__name__)

PROBLEM_JSON = "application/problem+json"
STORE_RETRY_AFTER_S = 5
OVERLOADED_TITLE = "Overloaded"
TYPE_BASE = "https://agentkit.dev/problems/"


class Problem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 9457 problem details, with a stable `code` and, for validation errors, the `errors`."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    code: str
    errors: list[dict[str, Any]] | None = None


class Unauthorized(Exception):
    """No API key, or one that is not configured."""


class RequestRejected(Exception):
    """A request the HTTP layer refuses before any use-case runs (media type, malformed or invalid body)."""

    def __init__(
        self, status: int, code: str, title: str, detail: str, *, errors: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.errors = errors


_BY_ERROR: list[tuple[type[Exception], int, str]] = [
    (RunNotFound, 404, "Run not found"),
    (SessionNotFound, 404, "Session not found"),
    (CursorNotFound, 404, "Page not found"),
    (InvalidListing, 422, "Invalid listing"),
    (RunConflict, 409, "Run conflict"),
    (IllegalTransition, 409, "Run conflict"),
    (ActionRefused, 409, "Answer refused"),
    (IdempotencyConflict, 409, "Request in progress"),
    (IdempotencyMismatch, 422, "Idempotency key reused"),
    (InvalidOutputSchema, 422, "Invalid output schema"),
    (InvalidGoal, 422, "Invalid run request"),
    (UnknownAgent, 422, "Unknown agent"),
    (InvalidCallbackURL, 422, "Invalid callback URL"),
    (WebhooksNotConfigured, 422, "Webhooks not configured"),
    (RateLimited, 429, "Too many requests"),
    (Overloaded, 503, OVERLOADED_TITLE),
    (StoreUnavailable, 503, "Service unavailable"),
    (ShuttingDown, 503, "Service unavailable"),
]

_HTTP_CODES = {
    400: ("bad_request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    404: ("not_found", "Not found"),
    405: ("method_not_allowed", "Method not allowed"),
    413: ("body_too_large", "Request body too large"),
    415: ("unsupported_media_type", "Unsupported media type"),
}


def problem(
    request: Request[Any, Any, Any],
    status: int,
    code: str,
    title: str,
    detail: str,
    *,
    headers: dict[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> Response[Problem]:
    """A problem-details response."""
    body = problem_details(status, code, title, detail, instance=request.url.path, errors=errors)
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def problem_details(
    status: int, code: str, title: str, detail: str, *, instance: str, errors: list[dict[str, Any]] | None = None
) -> Problem:
    """The problem-details body."""
    return Problem(
        type=TYPE_BASE + code.replace("_", "-"),
        title=title,
        status=status,
        detail=detail,
        instance=instance,
        code=code,
        errors=errors,
    )


def on_app_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    """Domain and application errors."""
    for kind, status, title in _BY_ERROR:
        if isinstance(exc, kind):
            headers = None
            if isinstance(exc, RateLimited | Overloaded):
                headers = {"Retry-After": retry_after(exc.retry_after_s)}
            elif isinstance(exc, StoreUnavailable):
                logger.warning("store_unavailable", path=request.url.path, error=str(exc))
                headers = {"Retry-After": str(STORE_RETRY_AFTER_S)}
            elif isinstance(exc, ShuttingDown):
                # the client should go elsewhere (or come back after the restart), not reuse this connection
                headers = {"Retry-After": str(STORE_RETRY_AFTER_S), "Connection": "close"}
            code = getattr(exc, "code", "error")
            return problem(request, status, code, title, str(exc), headers=headers)
    return on_unexpected(request, exc)


def retry_after(seconds: float) -> str:
    """A Retry-After value: whole seconds, at least one."""
    return str(max(1, math.ceil(seconds)))


def on_validation_error(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Problem]:
    """Request bodies and parameters that do not validate: say which field and why."""
    errors = [item for item in exc.extra if isinstance(item, dict)] if isinstance(exc.extra, list) else []
    if errors:
        detail = "; ".join(_describe(request, item) for item in errors)
        return problem(request, 422, "validation_error", "Invalid request", detail, errors=errors)
    # Litestar raises it without details for a body that is not JSON at all
    return problem(request, 400, "malformed_request", "Malformed request", str(exc.detail))


def on_http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Problem]:
    """Routing, method, size and malformed-body errors raised by the framework."""
    if isinstance(exc, ValidationException):
        return on_validation_error(request, exc)
    status = exc.status_code
    if status >= 500:
        return on_unexpected(request, exc)
    detail = str(exc.detail)
    if status == 400 and detail.startswith("JSON is malformed"):
        return problem(request, 400, "malformed_json", "Malformed JSON", detail)
    code, title = _HTTP_CODES.get(status, ("http_error", "Request error"))
    if status == 413:
        detail = _too_large(request)
    return problem(request, status, code, title, detail, headers=exc.headers)


def on_rejected(request: Request[Any, Any, Any], exc: RequestRejected) -> Response[Problem]:
    """A request refused by the HTTP layer itself."""
    return problem(request, exc.status, exc.code, exc.title, exc.detail, errors=exc.errors)


def on_unauthorized(request: Request[Any, Any, Any], exc: Unauthorized) -> Response[Problem]:
    """A missing or unknown API key."""
    return problem(request, 401, "unauthorized", "Unauthorized", str(exc), headers={"WWW-Authenticate": "X-API-Key"})


def on_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    """Anything else: logged with its stack, answered without it."""
    logger.error("unhandled_error", path=request.url.path, exc_info=exc)
    return problem(request, 500, "internal_error", "Internal server error", "the server failed to handle the request")


def _describe(request: Request[Any, Any, Any], item: dict[str, Any]) -> str:
    key, message = item.get("key"), str(item.get("message", "invalid"))
    source = item.get("source", "body")
    where = getattr(source, "value", source)  # Litestar gives a ParamType for query, path and header
    if where == "query" and key:
        # every query value arrives as text: "Expected `float`, got `str`" says the type, not what was wrong
        given = request.query_params.get(key)
        message = _QUERY_TYPE.sub(lambda found: f"expected {_TYPE_WORDS.get(found[1], found[1])}", message)
        return (
            f"query parameter {key}={given!r}: {message}" if given is not None else f"query parameter {key}: {message}"
        )
    if key and key != "data":
        return f"{where}.{key}: {message}"
    return f"{where}: {message}"


_QUERY_TYPE = re.compile(r"Expected `(\w+)`(?:, got `str`)?")
_TYPE_WORDS = {"float": "a number", "int": "a whole number", "bool": "true or false"}


def _too_large(request: Request[Any, Any, Any]) -> str:
    limit: int | None = None
    with contextlib.suppress(Exception):  # no route resolved: the limit is not known here
        limit = request.route_handler.resolve_request_max_body_size()
    if limit is None:
        return "the request body is larger than the server accepts (MAX_BODY_BYTES)"
    return f"the request body is larger than the server accepts: at most {limit} bytes (MAX_BODY_BYTES)"


_DESCRIPTIONS = {
    400: "Malformed request: JSON that does not parse, nests too deep, or a missing body",
    401: "Missing or unknown API key",
    404: "No such run, session or page (a cursor this API did not give) for this API key",
    409: (
        "The run's state does not allow it (`run_conflict`), or an answer does not fit the call it names "
        "(`digest_mismatch`, `unknown_call`, `already_answered`, `wrong_answer`)"
    ),
    413: "Request body larger than MAX_BODY_BYTES",
    415: "The body is not application/json",
    422: (
        "The request does not validate (the detail names the field, `code` is `validation_error`, "
        "`invalid_goal` or `invalid_output_schema`), names an agent that is not configured (`code` is "
        "`unknown_agent`), a callback_url is refused (`code` is `invalid_callback_url`: not http(s), too long, or its "
        "host is or resolves to a private, loopback, link-local or metadata address; `webhooks_not_configured`: the "
        "server has no WEBHOOK_SECRET), or a listing's time filter has no time zone (`code` is `invalid_listing`)"
    ),
    429: "Rate limit reached, or too many failed API keys from this address; see Retry-After",
    503: (
        "PostgreSQL or Redis is unavailable, the server has all the runs in flight it takes, or it is "
        "shutting down; see Retry-After"
    ),
}


# What a route that takes an Idempotency-Key can answer besides, as draft-ietf-httpapi-idempotency-key-header
# asks: 422 for the key reused with another payload, 409 while the first request is still being accepted.
_IDEMPOTENCY_KEY_DESCRIPTIONS = {
    409: (
        "; or a request with the same Idempotency-Key is still being accepted (`code` is `idempotency_conflict`): "
        "retry it"
    ),
    422: (
        "; or the Idempotency-Key was used before with a different body (`code` is `idempotency_key_reused`): "
        "a key names one request, and the same key with the same body returns the first run"
    ),
}


def problem_responses(*statuses: int, idempotency_key: bool = False) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the problem-details answers a route can give.

    A route behind the API-key guard (401) can also be throttled by it (429).

    Args:
        statuses: The problem statuses the route answers.
        idempotency_key: The route takes an Idempotency-Key: its 409 and 422 say what the key adds.
    """
    if 401 in statuses and 429 not in statuses:
        statuses = (*statuses, 429)
    return {
        status: ResponseSpec(
            data_container=Problem,
            description=_DESCRIPTIONS[status]
            + (_IDEMPOTENCY_KEY_DESCRIPTIONS.get(status, "") if idempotency_key else ""),
            media_type=PROBLEM_JSON,
            generate_examples=False,
        )
        for status in statuses
    }


EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    Unauthorized: on_unauthorized,
    RequestRejected: on_rejected,
    ValidationException: on_validation_error,
    HTTPException: on_http_error,
    DomainError: on_app_error,
    ApplicationError: on_app_error,
    Exception: on_unexpected,
}
