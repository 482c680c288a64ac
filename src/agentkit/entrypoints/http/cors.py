"""CORS for browser pages of other origins (a chat page, a dashboard): off unless CORS_ORIGINS names them.

Litestar's own CORS support answers the preflight (before any guard: a preflight carries no key)
and marks the answers to the origins listed. The list is explicit, never `*`, and credentials
(cookies) are never allowed: the API reads its key from a header, which a page must send itself.
"""

from litestar.config.cors import CORSConfig

from agentkit.entrypoints.http.auth import API_KEY_HEADER

# What a browser client sends beside the simple headers, and what it may read of the answers.
ALLOWED_HEADERS = [API_KEY_HEADER, "Content-Type", "Idempotency-Key", "Last-Event-ID", "Prefer", "traceparent"]
EXPOSED_HEADERS = ["Location", "Retry-After", "Idempotent-Replayed", "Preference-Applied", "X-Request-ID"]
_PREFLIGHT_CACHE_S = 600


def cors_config(origins: tuple[str, ...]) -> CORSConfig | None:
    """The CORS configuration for these origins; None (no CORS headers at all) when there are none."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=list(origins),
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        allow_credentials=False,
        max_age=_PREFLIGHT_CACHE_S,
    )
