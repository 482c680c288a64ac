"""PrometheusMetrics: runs by status, run and step latencies, tokens, cost, tool errors, retries, runs in flight.

Every metric lives in a registry of its own (one per container), so two apps in one process (tests)
never share counts. Labels are bounded: statuses and step kinds are fixed sets, models are the few
the process is configured with, and tool names past MAX_TOOL_LABELS are counted as `other` (a model
can ask for any name, and each would be a new series).
"""

from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from agentkit.application.ports.metrics_exporter import MetricsExporter
from agentkit.application.ports.run_observer import RunObserver
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep

MAX_TOOL_LABELS: Final = 64
_STEP_BUCKETS: Final = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_RUN_BUCKETS: Final = (0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
_MAX_TRACKED: Final = 100_000  # runs whose last status is remembered (a run ended elsewhere is dropped)


class PrometheusMetrics(RunObserver, MetricsExporter):
    """Counts what the run observer hears and renders it for Prometheus.

    Runs in flight and queued are the runs this process saw accepted or started and not yet ended.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs = Counter("agentkit_runs", "Runs that reached a terminal status, by status", ["status"], registry=r)
        self.runs_accepted = Counter("agentkit_runs_accepted", "Runs accepted (stored pending)", registry=r)
        self.in_flight = Gauge("agentkit_runs_in_flight", "Runs running in this process", registry=r)
        self.queued = Gauge("agentkit_runs_queued", "Runs accepted here and not yet started", registry=r)
        self.run_seconds = Histogram(
            "agentkit_run_duration_seconds",
            "Run latency from start to end, by status",
            ["status"],
            buckets=_RUN_BUCKETS,
            registry=r,
        )
        self.step_seconds = Histogram(
            "agentkit_step_duration_seconds",
            "Step latency by kind (llm, tool), tool and model",
            ["kind", "tool", "model"],
            buckets=_STEP_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "agentkit_llm_tokens", "Tokens spent, by model and direction", ["model", "direction"], registry=r
        )
        self.cost = Counter("agentkit_llm_cost_usd", "US dollars spent where the price is known", ["model"], registry=r)
        self.llm_errors = Counter(
            "agentkit_llm_errors", "LLM calls that failed for good, by error type", ["model", "error_type"], registry=r
        )
        self.retries = Counter(
            "agentkit_llm_provider_retries",
            "Provider requests made again after a transient failure",
            ["model"],
            registry=r,
        )
        self.tool_errors = Counter("agentkit_tool_errors", "Tool calls that returned an error", ["tool"], registry=r)
        self._status: dict[str, RunStatus] = {}
        self._tools: set[str] = set()
        # labelled children, looked up once per label set: `labels()` costs more than the count itself
        self._llm: dict[str, tuple[Any, Any, Any, Any, Any]] = {}
        self._tool_children: dict[str, tuple[Any, Any]] = {}

    @property
    def content_type(self) -> str:
        """Prometheus's text format."""
        return str(CONTENT_TYPE_LATEST)

    def render(self) -> bytes:
        """The registry in the text format."""
        return bytes(generate_latest(self.registry))

    def on_run(self, run: Run) -> None:
        """Move the run between the gauges; count it, and its latency, when it ends."""
        before = self._status.get(run.id)
        if before is run.status:
            return  # saved again in the same status (a heartbeat, a cancel flag)
        if before is RunStatus.PENDING:
            self.queued.dec()
        elif before is RunStatus.RUNNING:
            self.in_flight.dec()
        if run.status is RunStatus.PENDING:
            self.runs_accepted.inc()
            self.queued.inc()
        elif run.status is RunStatus.RUNNING:
            self.in_flight.inc()
        if run.is_terminal:
            self._status.pop(run.id, None)
            self.runs.labels(run.status.value).inc()
            started = run.started_at or run.created_at
            if run.finished_at is not None:
                self.run_seconds.labels(run.status.value).observe(max((run.finished_at - started).total_seconds(), 0))
            return
        if len(self._status) >= _MAX_TRACKED:
            self._status.pop(next(iter(self._status)))
        self._status[run.id] = run.status

    def on_step(self, step: Step) -> None:
        """Count the step's latency, and its tokens, cost, retries and errors."""
        if isinstance(step, LLMStep):
            model = step.prompt.model if step.prompt is not None else ""
            children = self._llm.get(model)
            if children is None:
                children = self._llm[model] = (
                    self.step_seconds.labels("llm", "", model),
                    self.tokens.labels(model, "input"),
                    self.tokens.labels(model, "output"),
                    self.cost.labels(model),
                    self.retries.labels(model),
                )
            seconds, tokens_in, tokens_out, cost, retries = children
            seconds.observe(step.latency_ms / 1000)
            tokens_in.inc(step.usage.input_tokens)
            tokens_out.inc(step.usage.output_tokens)
            if step.cost_usd is not None:
                cost.inc(step.cost_usd)
            if step.attempts > 1:
                retries.inc(step.attempts - 1)
            if step.error is not None:
                self.llm_errors.labels(model, step.error_type or "error").inc()
            return
        assert isinstance(step, ToolStep)  # noqa: S101 - Step has two members
        tool_children = self._tool_children.get(step.tool_name)
        if tool_children is None:
            tool = self._tool_label(step.tool_name)
            tool_children = (self.step_seconds.labels("tool", tool, ""), self.tool_errors.labels(tool))
            if tool != "other":
                self._tool_children[step.tool_name] = tool_children
        tool_seconds, tool_errors = tool_children
        tool_seconds.observe(step.latency_ms / 1000)
        if not step.result.ok:
            tool_errors.inc()

    def _tool_label(self, name: str) -> str:
        if name in self._tools:
            return name
        if len(self._tools) < MAX_TOOL_LABELS:
            self._tools.add(name)
            return name
        return "other"
