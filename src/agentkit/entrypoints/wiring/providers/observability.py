"""Observability providers: what the trace keeps of prompts, prices, metrics, OpenTelemetry, and the
observed run repository that feeds the observers.

The run event log's feed (GET /v1/runs/{id}/events) is always among the observers: it is part of the
API, not an option, so the run repository is always observed and every step reaches the observers.
"""

from collections.abc import AsyncIterator
from typing import NewType

import structlog
from dishka import Provider, Scope, decorate, provide

from agentkit.adapters.metrics import PrometheusMetrics
from agentkit.adapters.pricing import GenAIPriceTable
from agentkit.application.errors import ConfigurationError
from agentkit.application.observation import ObservedRunRepository, RunEventFeed, RunObservers
from agentkit.application.pipeline.pipeline import StepPipeline
from agentkit.application.pipeline.policy import PromptPolicy
from agentkit.application.ports.metrics_exporter import MetricsExporter
from agentkit.application.ports.price_table import PriceTable
from agentkit.application.ports.run_event_log import RunEventLog
from agentkit.application.ports.run_observer import RunObserver
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.trace_context import NoTraceContext, TraceContext
from agentkit.entrypoints.wiring.settings import Settings

ExtraObservers = NewType("ExtraObservers", tuple[RunObserver, ...])
"""Run observers another provider adds (the webhook notifier), heard like every other one."""

logger = structlog.get_logger(__name__)


def secrets_of(settings: Settings) -> tuple[str, ...]:
    """Every configured value that must never reach the trace: provider keys, API keys, passwords."""
    values = (
        settings.llm.openai_api_key,
        settings.llm.gemini_api_key,
        settings.llm.anthropic_api_key,
        settings.llm.azure_openai_api_key,
        settings.tools.search_api_key,
        settings.state.postgres_password,
        settings.state.redis_password,
        settings.webhooks.webhook_secret,
        *settings.http.api_keys,
    )
    return tuple(sorted({value for value in values if value}, key=len, reverse=True))


class OtelTracing:
    """The OpenTelemetry pieces, or none: the observer and the incoming-context hook."""

    def __init__(self, observer: RunObserver | None = None, context: TraceContext | None = None) -> None:
        self.observer = observer
        self.context = context or NoTraceContext()


class ObservabilityProvider(Provider):
    """Binds PromptPolicy, PriceTable, MetricsExporter, TraceContext and RunObservers; observes RunRepository."""

    scope = Scope.APP

    @provide
    def prompt_policy(self, settings: Settings) -> PromptPolicy:
        """TRACE_PAYLOADS, TRACE_REDACT_FIELDS, and the secrets never stored."""
        observability = settings.observability
        return PromptPolicy(
            payloads=observability.trace_payloads,
            redact_fields=frozenset(observability.trace_redact_fields),
            secrets=secrets_of(settings),
        )

    @provide
    def prices(self, settings: Settings) -> PriceTable | None:
        """genai-prices' table (unknown prices are None), unless LLM_PRICES_ENABLED is off."""
        if not settings.observability.llm_prices_enabled:
            return None
        return GenAIPriceTable(base_url=settings.llm.llm_base_url)

    @provide
    def metrics(self, settings: Settings) -> PrometheusMetrics | None:
        """Prometheus metrics in a registry of this container's own, unless METRICS_ENABLED is off."""
        return PrometheusMetrics() if settings.observability.metrics_enabled else None

    @provide
    def metrics_exporter(self, metrics: PrometheusMetrics | None) -> MetricsExporter:
        """What GET /metrics renders.

        Raises:
            ConfigurationError: metrics are off (the route is not registered then).
        """
        if metrics is None:
            raise ConfigurationError("METRICS_ENABLED: metrics are off")
        return metrics

    @provide
    async def tracing(self, settings: Settings) -> AsyncIterator[OtelTracing]:
        """OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set; its spans are flushed on close."""
        endpoint = settings.observability.otel_exporter_otlp_endpoint
        if endpoint is None:
            yield OtelTracing()
            return
        try:
            # the optional extra, imported only when asked for
            from agentkit.adapters import otel
        except ImportError:
            raise ConfigurationError(
                "OTEL_EXPORTER_OTLP_ENDPOINT: OpenTelemetry is not installed (pip install 'agentkit[otel]')"
            ) from None
        provider = otel.otlp_tracer_provider(endpoint, service_name=settings.observability.otel_service_name)
        tracer = provider.get_tracer("agentkit")
        logger.info("otel_export", endpoint=endpoint)
        try:
            yield OtelTracing(otel.OTelRunObserver(tracer), otel.W3CTraceContext())
        finally:
            provider.shutdown()  # exports what is batched (bounded by the exporter's timeout)

    @provide
    def trace_context(self, tracing: OtelTracing) -> TraceContext:
        """Continue an incoming traceparent (only when tracing is on)."""
        return tracing.context

    @provide
    def observers(
        self, log: RunEventLog, metrics: PrometheusMetrics | None, tracing: OtelTracing, extra: ExtraObservers
    ) -> RunObservers:
        """The run event log's feed, the other providers' observers, then every configured one."""
        configured = [found for found in (metrics, tracing.observer) if found is not None]
        return RunObservers([RunEventFeed(log), *extra, *configured])

    @decorate
    def observed_runs(self, runs: RunRepository, pipeline: StepPipeline) -> RunRepository:
        """The run repository, handing every run it stores to the run observers (when there are any)."""
        return ObservedRunRepository(runs, pipeline) if pipeline.observes_runs else runs
