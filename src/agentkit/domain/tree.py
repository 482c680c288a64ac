"""The tree of runs: which calls of other agents may start a child run, and with what limits.

A run calls another agent as a tool; the call starts a child run, which may call agents in turn.
The whole tree holds one set of limits: it grows at most `max_depth` levels below its root, an agent
never calls itself through its ancestors (a cycle, named by its path), and the root's token and cost
budgets and its max_steps hold for every run below it (a child gets what its parent has left).
"""

from agentkit.domain.run import Run


def path_of(run: Run) -> tuple[str, ...]:
    """The agents from the root of the run's tree down to the run."""
    return (*run.lineage, run.agent)


def child_refusal(parent: Run, callee: str, *, max_depth: int) -> str | None:
    """Why `parent` may not start a child run of `callee`, or None when it may.

    Refused: a child deeper than `max_depth`, an agent already on the path (a cycle), a parent whose
    token or cost budget its tree has spent.
    """
    path = path_of(parent)
    if callee in path:
        return f"refused: a cycle of agents ({' -> '.join((*path, callee))}); an agent cannot call itself"
    if parent.depth + 1 > max_depth:
        return (
            f"refused: the tree of runs may be {max_depth} levels deep, and this call would start a run "
            f"at level {parent.depth + 1} ({' -> '.join((*path, callee))})"
        )
    tokens = tokens_left(parent)
    if tokens is not None and tokens <= 0:
        return f"refused: the token budget of this tree of runs ({parent.token_budget}) is spent"
    cost = cost_left(parent)
    if cost is not None and cost <= 0:
        return f"refused: the cost budget of this tree of runs (${parent.cost_budget:g}) is spent"
    if steps_left(parent) <= 0:
        return f"refused: the steps of this tree of runs (max_steps {parent.max_steps}) are spent"
    return None


def steps_left(run: Run) -> int:
    """What the run's max_steps leaves after the LLM calls it and its ended children made."""
    return run.max_steps - run.tree_turns


def tokens_left(run: Run) -> int | None:
    """What the run's token budget leaves after the tokens it and its ended children spent (None: no budget)."""
    if run.token_budget is None:
        return None
    return run.token_budget - run.tree_input_tokens - run.tree_output_tokens


def cost_left(run: Run) -> float | None:
    """What the run's cost budget leaves after what it and its ended children cost (None: no budget)."""
    if run.cost_budget is None:
        return None
    return run.cost_budget - (run.tree_cost_usd or 0.0)


def lower(first: int | None, second: int | None) -> int | None:
    """The smaller of two optional limits (None: no limit)."""
    if first is None:
        return second
    return first if second is None else min(first, second)
