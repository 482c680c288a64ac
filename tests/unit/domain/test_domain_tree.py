"""The tree of runs: depth, cycles and budgets decide which calls of other agents start a child run."""

from datetime import UTC, datetime

import msgspec

from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run
from agentkit.domain.tree import child_refusal, cost_left, lower, path_of, tokens_left

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def run(**changes: object) -> Run:
    base = Run(id=RunId("r"), owner=OwnerId("o"), goal="g", created_at=T0, agent="triage")
    return msgspec.structs.replace(base, **changes)


def test_a_root_may_call_another_agent() -> None:
    assert child_refusal(run(), "math", max_depth=3) is None
    assert path_of(run(lineage=("a", "b"))) == ("a", "b", "triage")


def test_an_agent_on_the_path_is_a_cycle_named_by_its_path() -> None:
    refusal = child_refusal(run(lineage=("writer",)), "writer", max_depth=3)

    assert refusal == "refused: a cycle of agents (writer -> triage -> writer); an agent cannot call itself"
    assert "a cycle of agents (triage -> triage)" in (child_refusal(run(), "triage", max_depth=3) or "")


def test_a_child_below_the_maximum_depth_is_refused() -> None:
    assert child_refusal(run(lineage=("a", "b")), "math", max_depth=3) is None
    refusal = child_refusal(run(lineage=("a", "b", "c")), "math", max_depth=3)

    assert refusal is not None
    assert "may be 3 levels deep" in refusal
    assert "a -> b -> c -> triage -> math" in refusal


def test_a_tree_that_spent_its_budget_starts_no_child() -> None:
    spent = run(token_budget=100, input_tokens=50, children_input_tokens=45, children_output_tokens=5)
    poor = run(cost_budget=1.0, cost_usd=0.5, children_cost_usd=0.5)

    assert tokens_left(spent) == 0
    assert "token budget of this tree of runs (100) is spent" in (child_refusal(spent, "math", max_depth=3) or "")
    assert cost_left(poor) == 0.0
    assert "cost budget" in (child_refusal(poor, "math", max_depth=3) or "")
    assert tokens_left(run()) is None
    assert (lower(None, 5), lower(3, None), lower(3, 5), lower(None, None)) == (5, 3, 3, None)
