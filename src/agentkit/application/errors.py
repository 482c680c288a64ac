"""Errors raised by the application layer; the HTTP and CLI entrypoints map them in one place each.

ApplicationError
 ├── RunNotFound            no such run for this owner
 ├── UnknownAgent           no agent of that name is configured
 ├── SessionNotFound        no such session (or an empty one) for this owner
 ├── InvalidListing         a runs listing's limit or time filter is not acceptable
 ├── CursorNotFound         a runs listing's cursor names no page this API gave
 ├── RunConflict            the run cannot do that in its state (cancel a finished run)
 ├── IdempotencyConflict    the same Idempotency-Key is still being processed
 ├── IdempotencyMismatch    the same Idempotency-Key came with another request body
 ├── InvalidCallbackURL     a run's callback_url is not http(s), too long, or names a refused address
 ├── WebhooksNotConfigured  a callback_url was asked for, but no WEBHOOK_SECRET is set to sign with
 ├── RateLimited            too many requests; retry after some seconds
 │    └── AuthThrottled     too many failed API-key attempts from one client address
 ├── Overloaded             this process has as many runs in flight as it takes; retry after some seconds
 ├── ToolRegistrationError  a tool that cannot be registered (bad signature, unknown context type)
 ├── ConfigurationError     a setting that is missing or invalid
 ├── SchemaMismatch         the database's schema is not the one this release's code needs (at start-up)
 ├── StaleAttempt           a write from an executor that lost its lease (fencing)
 ├── StoreUnavailable       PostgreSQL or Redis did not answer
 ├── ShuttingDown           the process is stopping and takes no new runs
 └── LLMError               the provider failed for good
      ├── LLMRequestError   the provider rejected the request (bad request, bad key): not retried
      └── LLMUnavailable    transient trouble that outlived the retries
"""

import math


class ApplicationError(Exception):
    """Base of every error the application raises."""

    code = "application_error"


class RunNotFound(ApplicationError):
    """No run with this id belongs to this owner."""

    code = "run_not_found"


class UnknownAgent(ApplicationError):
    """No agent of this name is configured (the message lists those that are)."""

    code = "unknown_agent"


class SessionNotFound(ApplicationError):
    """No session with this id holds messages for this owner."""

    code = "session_not_found"


class InvalidListing(ApplicationError):
    """A runs listing asked with a limit out of range or a time without a time zone."""

    code = "invalid_listing"


class CursorNotFound(ApplicationError):
    """A runs listing's cursor is not one this API gave: the page it names does not exist."""

    code = "cursor_not_found"


class RunConflict(ApplicationError):
    """The run is in a state that does not allow this action."""

    code = "run_conflict"


class IdempotencyConflict(ApplicationError):
    """A request with the same Idempotency-Key is still being accepted."""

    code = "idempotency_conflict"


class IdempotencyMismatch(ApplicationError):
    """The Idempotency-Key was used before with a different request."""

    code = "idempotency_key_reused"


class InvalidCallbackURL(ApplicationError):
    """A run's callback URL that AgentKit will not POST to (the message says why)."""

    code = "invalid_callback_url"


class WebhooksNotConfigured(ApplicationError):
    """A run asked for a callback, but the server has no WEBHOOK_SECRET to sign webhooks with."""

    code = "webhooks_not_configured"


class RateLimited(ApplicationError):
    """The caller made too many requests."""

    code = "rate_limited"

    def __init__(self, retry_after_s: float, what: str = "rate limit exceeded") -> None:
        super().__init__(f"{what}; retry after {max(1, math.ceil(retry_after_s))} s")
        self.retry_after_s = retry_after_s


class AuthThrottled(RateLimited):
    """A client address sent too many unknown API keys; it is refused before its keys are compared."""

    code = "auth_throttled"

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(retry_after_s, "too many failed API key attempts from this address")


class Overloaded(ApplicationError):
    """The process runs as many runs as it may (MAX_RUNS_IN_FLIGHT); the request was refused, nothing stored."""

    code = "overloaded"

    def __init__(self, retry_after_s: float) -> None:
        wait_s = max(1, math.ceil(retry_after_s))
        super().__init__(f"the server is at its limit of runs in flight; retry after {wait_s} s")
        self.retry_after_s = retry_after_s


class ToolRegistrationError(ApplicationError):
    """A tool cannot be registered."""

    code = "tool_registration_error"


class ConfigurationError(ApplicationError):
    """A setting is missing or invalid; the message names the variable."""

    code = "configuration_error"


class SchemaMismatch(ApplicationError):
    """The database's schema is behind the code (not migrated) or ahead of it (a newer release migrated it).

    `agentkit serve` and `agentkit worker` refuse to start on it; the message names both revisions and what to do.
    """

    code = "schema_mismatch"


class StaleAttempt(ApplicationError):
    """An executor whose lease lapsed tried to write a run that a newer attempt owns."""

    code = "stale_attempt"


class StoreUnavailable(ApplicationError):
    """A state store (PostgreSQL, Redis) did not answer; adapters raise it instead of their drivers' errors."""

    code = "store_unavailable"


class ShuttingDown(ApplicationError):
    """The process is shutting down: it takes no new runs (another instance, or this one restarted, will)."""

    code = "shutting_down"


class LLMError(ApplicationError):
    """The LLM provider failed and the run cannot go on."""

    code = "llm_error"

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class LLMRequestError(LLMError):
    """The provider rejected the request (invalid request, bad key, unknown model): never retried."""

    code = "llm_request_error"


class LLMUnavailable(LLMError):
    """The provider stayed unavailable (rate limits, timeouts, 5xx) after every retry."""

    code = "llm_unavailable"
