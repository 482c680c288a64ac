"""ApiConfig: the few settings the HTTP layer reads, handed in by the composition root."""

import msgspec


class ApiConfig(msgspec.Struct, frozen=True, kw_only=True):
    """What the API enforces and shows in its OpenAPI document.

    Attributes:
        api_keys: The keys accepted in X-API-Key (API_KEYS).
        auth_failures_per_min: Failed key attempts one client address may make a minute.
        max_body_bytes: The largest request body (MAX_BODY_BYTES).
        max_goal_chars: The longest goal (MAX_GOAL_CHARS).
        response_timeout_s: How long POST /v1/runs waits before answering 202 (RESPONSE_TIMEOUT_S).
        shutdown_grace_s: How long running runs get once the process is told to stop (SHUTDOWN_GRACE_S).
        agent_names: The configured agents (the OpenAPI document lists them).
        metrics_route: Serve GET /metrics here, behind the API key (metrics on, METRICS_BIND unset).
        webhooks: Runs may ask for a callback_url (WEBHOOK_SECRET is set).
        a2a_v03: The A2A endpoints also speak A2A v0.3 (A2A_V03_COMPAT).
        a2a_wait_s: How long A2A's blocking SendMessage waits at most for its run to come to rest.
        cors_origins: The origins whose browser pages may call the API (CORS_ORIGINS; empty: CORS off).
    """

    api_keys: tuple[str, ...] = ()
    auth_failures_per_min: int = 10
    max_body_bytes: int = 65536
    max_goal_chars: int = 8000
    response_timeout_s: float = 30.0
    shutdown_grace_s: float = 10.0
    agent_names: tuple[str, ...] = ("default",)
    metrics_route: bool = False
    webhooks: bool = False
    a2a_v03: bool = True
    a2a_wait_s: float = 330.0
    cors_origins: tuple[str, ...] = ()
