"""Prices (genai-prices' table and fixed ones) and the Prometheus observer's counts."""

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentkit.adapters.memory import FixedPriceTable
from agentkit.adapters.metrics import PrometheusMetrics
from agentkit.adapters.pricing import GenAIPriceTable
from agentkit.domain import run as runs
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.messages import Usage
from agentkit.domain.run import Run, RunStatus

T0 = datetime(2026, 12, 1, tzinfo=UTC)
USAGE = Usage(input_tokens=1_000_000, output_tokens=1_000_000)


def test_known_models_are_priced_from_the_table() -> None:
    table = GenAIPriceTable()

    assert table.cost_usd("openai", "gpt-4o-mini", USAGE) == pytest.approx(0.15 + 0.60)
    assert table.cost_usd("gemini", "gemini-2.5-flash", USAGE) == pytest.approx(0.30 + 2.50)
    assert table.cost_usd("openai", "gpt-4o-mini", Usage()) == 0.0  # known price, nothing spent


def test_unknown_models_providers_and_local_servers_have_no_price() -> None:
    assert GenAIPriceTable().cost_usd("openai", "no-such-model", USAGE) is None
    assert GenAIPriceTable().cost_usd("scripted", "script", USAGE) is None
    assert GenAIPriceTable().cost_usd("openai", "", USAGE) is None
    local = GenAIPriceTable(base_url="http://127.0.0.1:11434/v1")
    assert local.cost_usd("openai", "llama3.2", USAGE) is None


def test_fixed_prices_are_per_million_tokens() -> None:
    table = FixedPriceTable({("p", "m"): (1.0, 2.0)})

    assert table.cost_usd("p", "m", Usage(input_tokens=500_000, output_tokens=250_000)) == pytest.approx(1.0)
    assert table.cost_usd("p", "other", USAGE) is None


def values(metrics: PrometheusMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for sample in family.samples
    }


def test_runs_move_from_queued_to_in_flight_to_their_status() -> None:
    metrics = PrometheusMetrics()
    pending = Run(id=RunId("r1"), owner=OwnerId("o"), goal="g", created_at=T0)
    running = runs.start(pending, now=T0 + timedelta(seconds=1))

    metrics.on_run(pending)
    queued = values(metrics)
    metrics.on_run(running)
    metrics.on_run(running)  # saved again (a heartbeat): counted once
    in_flight = values(metrics)
    metrics.on_run(runs.succeed(running, now=T0 + timedelta(seconds=3), answer="a"))
    done = values(metrics)

    assert (queued[("agentkit_runs_queued", ())], queued[("agentkit_runs_in_flight", ())]) == (1, 0)
    assert (in_flight[("agentkit_runs_queued", ())], in_flight[("agentkit_runs_in_flight", ())]) == (0, 1)
    assert (done[("agentkit_runs_queued", ())], done[("agentkit_runs_in_flight", ())]) == (0, 0)
    assert done[("agentkit_runs_total", (("status", "succeeded"),))] == 1
    assert done[("agentkit_run_duration_seconds_sum", (("status", "succeeded"),))] == pytest.approx(2.0)


def test_a_run_this_process_never_saw_start_is_still_counted_when_it_ends() -> None:
    metrics = PrometheusMetrics()
    lapsed = runs.start(Run(id=RunId("r2"), owner=OwnerId("o"), goal="g", created_at=T0), now=T0)

    metrics.on_run(runs.expire(lapsed, now=T0 + timedelta(seconds=30)))

    found = values(metrics)
    assert found[("agentkit_runs_total", (("status", RunStatus.EXPIRED.value),))] == 1
    assert found[("agentkit_runs_in_flight", ())] == 0  # never below zero
