"""Settings: every environment variable AgentKit reads, parsed once at the root into sections by concern.

`load_settings(os.environ)` is called by the composition root only; a bad value raises
ConfigurationError with one line naming the variable, and start-up stops there. The root hands each
adapter and use-case the few values it needs (or a small config Struct of its own), never this object.

A field is read from the variable of its name in upper case (`max_steps` from `MAX_STEPS`); names
are unique across the sections, so the environment stays one flat list (`.env.example`).
"""

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from agentkit.adapters.llm.config import LLMConfig, NonNegativeInt, PositiveFloat, PositiveInt
from agentkit.application.errors import ConfigurationError

Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]


class StateSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """Where runs, traces, sessions and rate limits live, and how long to wait for those servers."""

    # auto: Postgres/Redis where a URL (or POSTGRES_HOST) is set, memory where not; embedded: a private
    # server from the `embedded` extra where no URL is set; external: both URLs required; memory: no servers.
    state_backend: Literal["auto", "memory", "external", "embedded"] = "auto"
    database_url: str | None = None
    # `agentkit serve` and `agentkit worker` refuse a configured database whose schema is behind the code;
    # with this set they migrate it first (the embedded one is always migrated: nobody else would).
    migrate_on_start: bool = False
    database_readonly_url: str | None = None
    postgres_host: str | None = None
    postgres_port: Port = 5432
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
    # Each run's live events (GET /v1/runs/{id}/events) are a Redis stream of about this many entries
    # at most, kept this long after its last event.
    run_events_max_len: PositiveInt = 10_000
    run_events_ttl_s: PositiveInt = 3600
    # Redis connections the followers of runs may hold at once (each holds one while it waits).
    run_events_readers: PositiveInt = 200
    # State in memory (STATE_BACKEND=memory, `agentkit run`): ended runs kept, with their traces and
    # logs; past it the runs that ended longest ago are forgotten, so a long-lived process stays bounded.
    memory_max_runs: NonNegativeInt = 10_000


class LoopSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """The limits every run obeys, and how runs are executed."""

    max_steps: PositiveInt = 10
    max_repeated_calls: Annotated[int, msgspec.Meta(ge=2)] = 3
    run_token_budget: PositiveInt | None = None
    run_timeout_s: PositiveFloat = 120.0
    max_goal_chars: PositiveInt = 8000
    # inline: the process that accepts a run executes it; queue: runs go on a SAQ queue in Redis and
    # `agentkit worker` processes (any number, on any machine) execute them.
    run_mode: Literal["inline", "queue"] = "inline"
    run_lease_s: PositiveFloat = 30.0
    # Executors a run may have: one that dies (its lease lapses) hands the run to the next, which
    # resumes it from its last stored step; after this many the run ends `expired` (worker_lost).
    max_run_attempts: PositiveInt = 3
    # How many levels of child runs (agents called as tools) a tree of runs may grow below its root.
    agent_tree_max_depth: PositiveInt = 3
    # How long a paused run (`requires_action`: an approval or a client tool's output) waits for its
    # answers before it ends `expired`. A day by default: people answer approvals.
    approval_ttl_s: PositiveFloat = 86400.0
    # Runs one worker process executes at once (queue mode).
    worker_concurrency: PositiveInt = 10
    # The SAQ queue's name in Redis (queue mode); API and workers must agree on it.
    run_queue_name: str = "agentkit-runs"
    # How long a run keeps retrying the writes its outcome depends on (start, trace, final status) while
    # PostgreSQL is unavailable, its lease renewed meanwhile; past it the run is left to the sweeper.
    run_store_retry_s: PositiveFloat = 300.0
    # Runs one process takes on at once; past it POST /v1/runs answers 503 with Retry-After at once,
    # so overload is refused rather than queued. Unset: the database pool's size (see runs_in_flight_cap).
    max_runs_in_flight: PositiveInt | None = None
    # On SIGTERM: waits end at once, new runs are refused, running runs get this long to finish
    # before they are handed back (trace stored, lease given up: another executor resumes them).
    shutdown_grace_s: Annotated[float, msgspec.Meta(ge=0)] = 10.0


class HttpSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """The REST API: keys, limits, waits and where it listens."""

    api_keys: tuple[str, ...] = ()
    rate_limit_per_min: PositiveInt = 30
    # Failed API-key attempts (missing or unknown key) one client address may make a minute; past it
    # the address gets 429 until the window slides, before its keys are even compared.
    auth_failures_per_min: PositiveInt = 10
    # Reverse proxies (addresses or networks, comma-separated; * for any) whose X-Forwarded-For names
    # the client. Empty: the TCP peer is the client, whatever headers it sends.
    forwarded_allow_ips: tuple[str, ...] = ()
    response_timeout_s: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    max_body_bytes: PositiveInt = 65536
    # A run's event stream with nothing to say sends a comment this often, so proxies with idle
    # timeouts keep the connection open.
    sse_keepalive_s: PositiveFloat = 15.0
    # The A2A endpoints (/a2a/{agent}) also take A2A v0.3's method names (clients that send no
    # A2A-Version header are v0.3 ones); off: such a client gets VersionNotSupported.
    a2a_v03_compat: bool = True
    # Origins whose browser pages may call the API (CORS), each `scheme://host[:port]`, comma-separated;
    # an explicit list (no `*`, no path). Empty: no CORS headers, as a browser page of another origin
    # should not hold an API key unless its owner means it to.
    cors_origins: tuple[Annotated[str, msgspec.Meta(pattern=r"^https?://[A-Za-z0-9.\[\]:-]+$")], ...] = ()
    host: str = "127.0.0.1"
    port: Port = 8000


class ToolSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """Which tools there are and the limits of the built-in ones."""

    agentkit_tool_modules: tuple[str, ...] = ()
    tool_timeout_s: PositiveFloat = 30.0
    tool_output_max_chars: PositiveInt = 8000
    # The tool calls of one model turn run at once: at most this many of one run's, and at most
    # TOOL_CONCURRENCY_PER_PROCESS over all the runs of a process; the others wait their turn.
    tool_concurrency: PositiveInt = 8
    tool_concurrency_per_process: PositiveInt = 64
    # Where sync tools run that do not choose (@tool(isolation=...)): thread, in this process (one that
    # overruns its timeout is abandoned but runs on); process, in a pool of worker processes killed at
    # the timeout, under the limits below and without this process's environment.
    tool_isolation: Literal["thread", "process"] = "thread"
    # Worker processes at most (started as calls need them), each one call at a time.
    tool_process_pool_size: PositiveInt = 8
    # A worker's address space (RLIMIT_AS) and the CPU seconds one call may use (RLIMIT_CPU, whole
    # seconds; unset: the call's timeout).
    tool_process_memory_mb: PositiveInt = 1024
    tool_process_cpu_s: PositiveFloat | None = None
    # Variables of this process's environment the workers get, beside PATH, HOME, the locale and the
    # temporary folder (comma-separated names): the service's secrets stay out.
    tool_process_env: tuple[str, ...] = ()
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


class AgentSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """The agents file and how patiently to talk to the MCP servers it names."""

    # A TOML file of agent profiles and MCP servers (docs/agents.md); unset: only the `default` agent.
    agents_file: str | None = None
    # Connecting to an MCP server and listing its tools; past it the server counts as down (and is retried).
    mcp_connect_timeout_s: PositiveFloat = 10.0
    # How often an idle MCP connection is pinged, so a server that died is restarted before a call needs it.
    mcp_ping_interval_s: PositiveFloat = 5.0


class ObservabilitySettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """What the trace stores of each prompt, the metrics endpoint, and OpenTelemetry export."""

    # Off: prompts are stored without their content (roles, tool names, ids and digests only), and
    # tool steps without their arguments. Secrets (keys, passwords) are never stored either way.
    trace_payloads: bool = True
    # Keys whose values are stored as "[redacted]" wherever they appear in tool-call arguments.
    trace_redact_fields: tuple[str, ...] = ()
    metrics_enabled: bool = True
    # host:port of a listener of its own for /metrics (no API key there: bind it where only the
    # scraper reaches). Unset: /metrics is served by the API, behind the API key.
    metrics_bind: str | None = None
    # An OTLP/HTTP endpoint (`http://collector:4318`): spans of every run go there (needs agentkit[otel]).
    otel_exporter_otlp_endpoint: str | None = None
    otel_service_name: str = "agentkit"
    # Costs from genai-prices' table; off: every cost is unknown (null).
    llm_prices_enabled: bool = True


class WebhookSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """Webhooks: where a run's events are POSTed when it names no callback_url, how they are signed and retried."""

    # The callback URL of runs that give none of their own (unset: only runs that ask get webhooks).
    webhook_url: str | None = None
    # The Standard Webhooks signing secret, `whsec_` and base64 of 24 to 64 bytes. Unset: WEBHOOK_URL is
    # refused at start-up and a run asking for a callback_url is refused (422 webhooks_not_configured).
    webhook_secret: str | None = None
    # Let callback URLs reach loopback addresses (tests, a receiver on the same machine). Private,
    # link-local and metadata addresses stay refused.
    webhook_allow_loopback: bool = False
    webhook_max_attempts: PositiveInt = 10
    # The wait before the second attempt; it doubles each time (with jitter), up to WEBHOOK_RETRY_MAX_S.
    webhook_retry_first_s: PositiveFloat = 2.0
    webhook_retry_max_s: PositiveFloat = 900.0
    # One attempt, connection to answer.
    webhook_timeout_s: PositiveFloat = 10.0
    # How often a sender looks for due deliveries stored by other processes (its own it sends at once).
    webhook_poll_s: PositiveFloat = 1.0


class LoggingSettings(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """How the process logs."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["auto", "json", "console"] = "auto"


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """AgentKit's whole configuration, one section per concern."""

    state: StateSettings = StateSettings()
    llm: LLMConfig = LLMConfig()
    loop: LoopSettings = LoopSettings()
    http: HttpSettings = HttpSettings()
    tools: ToolSettings = ToolSettings()
    agents: AgentSettings = AgentSettings()
    observability: ObservabilitySettings = ObservabilitySettings()
    webhooks: WebhookSettings = WebhookSettings()
    logging: LoggingSettings = LoggingSettings()


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    field.name: field.type for field in msgspec.structs.fields(Settings) if isinstance(field.type, type)
}
# every variable, to its section
_VARIABLES: dict[str, str] = {
    field.encode_name: section for section, kind in _SECTIONS.items() for field in msgspec.structs.fields(kind)
}
_LIST_FIELDS = frozenset(
    {
        "API_KEYS",
        "AGENTKIT_TOOL_MODULES",
        "FORWARDED_ALLOW_IPS",
        "TRACE_REDACT_FIELDS",
        "TOOL_PROCESS_ENV",
        "CORS_ORIGINS",
    }
)


def load_settings(environ: Mapping[str, str], **overrides: Any) -> Settings:
    """Read settings from an environment mapping; keyword overrides win, by variable name in lower case.

    Empty variables count as unset. Raises ConfigurationError naming the first bad variable.
    """
    raw: dict[str, dict[str, Any]] = {section: {} for section in _SECTIONS}
    for name, section in _VARIABLES.items():
        value = environ.get(name)
        if value is None or value.strip() == "":
            continue
        raw[section][name] = _split(value) if name in _LIST_FIELDS else value.strip()
    for field, value in overrides.items():
        known = _VARIABLES.get(field.upper())
        if known is None:
            raise TypeError(f"load_settings() got an unknown setting {field!r}")
        if value is not None:
            raw[known][field.upper()] = value
    try:
        return msgspec.convert(raw, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigurationError(_one_line(str(exc))) from None


def variables() -> dict[str, str]:
    """Every variable AgentKit reads, to the section that holds it (for `.env.example` checks)."""
    return dict(_VARIABLES)


def runs_in_flight_cap(settings: Settings) -> int:
    """MAX_RUNS_IN_FLIGHT, or by default the database pool: DATABASE_POOL_SIZE + DATABASE_MAX_OVERFLOW.

    Why the pool: a run holds a connection for one statement at a time and never across an LLM or
    tool call, so with as many runs in flight as there are connections no run ever waits for one.
    Past that, runs queue for the pool and, since a run's own work is CPU on the one event loop,
    for the loop too: each extra run adds latency to every run and to every refusal, and no
    throughput (measured in docs/benchmarks.md, "Overload": twice the pool doubled the refusals'
    latency). Runs that spend seconds in a real model hold no connection meanwhile: raise the cap there.
    """
    if settings.loop.max_runs_in_flight is not None:
        return settings.loop.max_runs_in_flight
    return settings.state.database_pool_size + settings.state.database_max_overflow


def metrics_address(settings: Settings) -> tuple[str, int] | None:
    """METRICS_BIND as (host, port), or None when /metrics is served by the API.

    Raises:
        ConfigurationError: not `host:port`.
    """
    bind = settings.observability.metrics_bind
    if bind is None:
        return None
    host, _, port = bind.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:  # 0: any free port
        raise ConfigurationError(f"METRICS_BIND: expected host:port, got {bind!r}")
    return host.strip("[]"), int(port)


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _one_line(message: str) -> str:
    # msgspec says "Expected `int`, got `str` - at `$.loop.MAX_STEPS`"; lead with the variable's name.
    if " - at `$." in message:
        detail, _, path = message.rpartition(" - at `$.")
        return f"{path.rstrip('`').rpartition('.')[2]}: {detail}"
    return message
