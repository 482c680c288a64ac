"""Settings: every environment variable AgentKit reads, parsed once into one Struct.

`load_settings(os.environ)` is called by the entrypoints; a bad value raises ConfigurationError
with one line naming the variable, and start-up stops there.
"""

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from agentkit.application.errors import ConfigurationError

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]


class Settings(msgspec.Struct, frozen=True, kw_only=True, rename="upper", forbid_unknown_fields=False):
    """AgentKit's configuration. Field `max_steps` is read from `MAX_STEPS`, and so on."""

    # --- state: Postgres and Redis (empty URLs mean the embedded default) ---
    # auto: Postgres/Redis where a URL (or POSTGRES_HOST) is set, memory where not; embedded: a private
    # server from the `embedded` extra where no URL is set; external: both URLs required; memory: no servers.
    state_backend: Literal["auto", "memory", "external", "embedded"] = "auto"
    database_url: str | None = None
    database_readonly_url: str | None = None
    postgres_host: str | None = None
    postgres_port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 5432
    postgres_user: str = "postgres"
    postgres_password: str = ""
    postgres_db: str = "agentkit"
    postgres_readonly_user: str = "agentkit_demo_reader"
    postgres_readonly_password: str = "agentkit_demo_reader"  # noqa: S105 - a local demo role's default
    demo_database: str = "agentkit_demo"
    redis_url: str | None = None
    redis_password: str | None = None
    agentkit_data_dir: str = ".agentkit"
    session_ttl_s: PositiveInt = 3600
    session_max_messages: PositiveInt = 50
    # All kept open, none overflowing: an overflow connection is closed on return and opening it again
    # (TLS negotiation, empty prepared-statement cache) cost more than the queries; at 50 concurrent
    # requests 30 + 0 served 315 runs/s where 20 + 10 served 200.
    database_pool_size: PositiveInt = 30
    database_max_overflow: NonNegativeInt = 0
    # Bounds on every wait for PostgreSQL, so a server that is down or frozen costs a request a 503 within
    # seconds instead of hanging it: a new connection, a free pooled connection, one statement.
    database_connect_timeout_s: PositiveFloat = 3.0
    database_pool_timeout_s: PositiveFloat = 3.0
    database_statement_timeout_s: PositiveFloat = 3.0
    # One try of a trace batch; a try that takes longer (or fails for an outage) is retried, never dropped.
    trace_write_timeout_s: PositiveFloat = 5.0
    redis_key_prefix: str = "agentkit:"
    # Bounds on waiting for Redis: a new connection, and each reply.
    redis_connect_timeout_s: PositiveFloat = 2.0
    redis_socket_timeout_s: PositiveFloat = 2.0
    # --- LLM providers ---
    # demo: a rule-based stand-in that answers AgentKit's own demo questions with the built-in tools,
    # so a fresh install runs; a real deployment names openai, gemini or a plug-in.
    llm_provider: str = "demo"
    llm_model: str = ""
    llm_base_url: str | None = None
    llm_script: str | None = None
    openai_api_key: str | None = None
    gemini_api_key: str | None = None
    llm_temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    llm_max_tokens: PositiveInt | None = None
    llm_request_timeout_s: PositiveFloat = 60.0
    llm_max_retries: NonNegativeInt = 3
    llm_backoff_base_s: PositiveFloat = 0.5
    llm_backoff_cap_s: PositiveFloat = 20.0
    # openai: the `content` of an assistant message that calls tools and says nothing. "" works for
    # OpenAI and llama-cpp-python (a missing key makes its templates fail); null for gateways that reject "".
    llm_tool_call_content: Literal["empty", "null", "omit"] = "empty"
    # openai: read an answer made only of JSON tool calls naming offered tools as those calls
    # (small models on their own chat template write them as text); off: it stays the answer.
    llm_text_tool_calls: bool = False
    # --- the loop ---
    max_steps: PositiveInt = 10
    max_repeated_calls: Annotated[int, msgspec.Meta(ge=2)] = 3
    run_token_budget: PositiveInt | None = None
    run_timeout_s: PositiveFloat = 120.0
    tool_timeout_s: PositiveFloat = 30.0
    tool_output_max_chars: PositiveInt = 8000
    max_goal_chars: PositiveInt = 8000
    agentkit_tool_modules: tuple[str, ...] = ()
    # --- the HTTP API ---
    api_keys: tuple[str, ...] = ()
    rate_limit_per_min: PositiveInt = 30
    # Failed API-key attempts (missing or unknown key) one client address may make a minute; past it
    # the address gets 429 until the window slides, before its keys are even compared.
    auth_failures_per_min: PositiveInt = 10
    # Reverse proxies (addresses or networks, comma-separated; * for any) whose X-Forwarded-For names
    # the client. Empty: the TCP peer is the client, whatever headers it sends.
    forwarded_allow_ips: tuple[str, ...] = ()
    # Runs one process takes on at once; past it POST /v1/runs answers 503 with Retry-After at once,
    # so overload is refused rather than queued. Unset: the database pool's size (see runs_in_flight_cap).
    max_runs_in_flight: PositiveInt | None = None
    response_timeout_s: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    run_mode: Literal["inline", "queue"] = "inline"
    run_lease_s: PositiveFloat = 30.0
    # On SIGTERM: waits end at once, new runs are refused, running runs get this long to finish
    # before they are interrupted (recorded as failed: interrupted); the process exits soon after.
    shutdown_grace_s: Annotated[float, msgspec.Meta(ge=0)] = 10.0
    # How long a run keeps retrying the writes its outcome depends on (start, trace, final status) while
    # PostgreSQL is unavailable, its lease renewed meanwhile; past it the run is left to the sweeper.
    run_store_retry_s: PositiveFloat = 300.0
    max_body_bytes: PositiveInt = 65536
    host: str = "127.0.0.1"
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 8000
    # --- built-in tools ---
    file_tool_base_dir: str = "./data/files"
    file_tool_max_bytes: PositiveInt = 1_000_000
    sql_row_limit: PositiveInt = 100
    sql_statement_timeout_ms: PositiveInt = 5000
    http_fetch_timeout_s: PositiveFloat = 10.0
    http_fetch_max_bytes: PositiveInt = 2_000_000
    http_fetch_max_redirects: NonNegativeInt = 5
    search_provider: str = "brave"
    search_api_key: str | None = None
    search_max_results: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5
    search_timeout_s: PositiveFloat = 10.0
    calculator_max_chars: PositiveInt = 500
    calculator_max_depth: PositiveInt = 30
    calculator_max_digits: PositiveInt = 1000
    calculator_max_exponent: PositiveInt = 10_000
    # --- logging ---
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"


_LIST_FIELDS = frozenset({"API_KEYS", "AGENTKIT_TOOL_MODULES", "FORWARDED_ALLOW_IPS"})
_KNOWN = frozenset(field.encode_name for field in msgspec.structs.fields(Settings))


def load_settings(environ: Mapping[str, str], **overrides: Any) -> Settings:
    """Read settings from an environment mapping; keyword overrides (by field name) win.

    Empty variables count as unset. Raises ConfigurationError naming the first bad variable.
    """
    raw: dict[str, Any] = {}
    for name in _KNOWN:
        value = environ.get(name)
        if value is None or value.strip() == "":
            continue
        raw[name] = tuple(p.strip() for p in value.split(",") if p.strip()) if name in _LIST_FIELDS else value.strip()
    for field, value in overrides.items():
        if field.upper() not in _KNOWN:
            raise TypeError(f"load_settings() got an unknown setting {field!r}")
        if value is not None:
            raw[field.upper()] = value
    try:
        return msgspec.convert(raw, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigurationError(_one_line(str(exc))) from None


def runs_in_flight_cap(settings: Settings) -> int:
    """MAX_RUNS_IN_FLIGHT, or by default the database pool: DATABASE_POOL_SIZE + DATABASE_MAX_OVERFLOW.

    Why the pool: a run holds a connection for one statement at a time and never across an LLM or
    tool call, so with as many runs in flight as there are connections no run ever waits for one.
    Past that, runs queue for the pool and, since a run's own work is CPU on the one event loop,
    for the loop too: each extra run adds latency to every run and to every refusal, and no
    throughput (measured in docs/benchmarks.md, "Overload": twice the pool doubled the refusals'
    latency). Runs that spend seconds in a real model hold no connection meanwhile: raise the cap there.
    """
    if settings.max_runs_in_flight is not None:
        return settings.max_runs_in_flight
    return settings.database_pool_size + settings.database_max_overflow


def _one_line(message: str) -> str:
    # msgspec says "Expected `int`, got `str` - at `$.MAX_STEPS`"; lead with the variable's name.
    if " - at `$." in message:
        detail, _, path = message.rpartition(" - at `$.")
        return f"{path.rstrip('`')}: {detail}"
    return message
