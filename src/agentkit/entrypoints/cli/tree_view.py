"""`agentkit runs trace ID --tree`: a run and its child runs as one indented tree of steps."""

from agentkit.application.runs.queries import RunTreeNode
from agentkit.domain.steps import LLMStep, Step, ToolStep


def tree_lines(node: RunTreeNode, indent: str = "") -> list[str]:
    """The lines of the tree: each run's header, its steps, and each child run under the call that started it."""
    run = node.run
    tokens = f"{run.input_tokens}+{run.output_tokens} tokens"
    if run.children_input_tokens or run.children_output_tokens:
        tokens += f" (tree {run.tree_input_tokens}+{run.tree_output_tokens})"
    lines = [f"{indent}{run.agent} {run.id} {run.status.value}, {tokens}"]
    if run.failure_reason:
        lines.append(f"{indent}  why: {run.failure_reason}")
    by_call = {child.run.parent_call_id: child for child in node.children}
    shown: set[str] = set()
    for step in node.steps:
        lines.append(f"{indent}  {_step_line(step)}")
        child = by_call.get(step.call_id) if isinstance(step, ToolStep) else None
        if child is not None:
            shown.add(child.run.id)
            lines.extend(tree_lines(child, indent + "    "))
    for child in node.children:  # started, but their call has no result yet (the parent waits)
        if child.run.id not in shown:
            lines.extend(tree_lines(child, indent + "    "))
    return lines


def _step_line(step: Step) -> str:
    if isinstance(step, LLMStep):
        who = f" [{step.agent}]" if step.agent else ""
        asked = ", ".join(call.name for call in step.tool_calls)
        said = f"calls {asked}" if asked else repr(_short(step.text))
        return f"{step.step_no:>3} llm{who} {said}"
    assert isinstance(step, ToolStep)  # noqa: S101 - a step is one of two kinds
    result = step.result
    outcome = _short(result.output) if result.ok else f"ERROR {_short(result.error or '')}"
    return f"{step.step_no:>3} tool {step.tool_name} -> {outcome}"


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
