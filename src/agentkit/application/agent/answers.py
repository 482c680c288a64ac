"""The tool result an answered call stands for: a rejection the model reads, or a client tool's output."""

from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain.actions import CallAnswer, Decision
from agentkit.domain.messages import ToolCall
from agentkit.domain.tools import ToolResult


def answered_result(call: ToolCall, answer: CallAnswer, tools: ToolRegistry) -> ToolResult:
    """The result of a call its answer decided without running a tool here.

    A rejected call is a tool error (so the model can change course, as with any failed call); a
    client tool's output is the call's output, untrusted data like any tool's (and cut to the same
    TOOL_OUTPUT_MAX_CHARS). A child run's answer is its result; its failure, an error.
    """
    if answer.decision is Decision.REJECT:
        why = f": {answer.reason}" if answer.reason else ""
        return ToolResult(ok=False, error=f"a reviewer rejected this call of {call.name!r}{why}")
    if answer.decision is Decision.FAIL:  # a child run that did not succeed, or was not started
        return ToolResult(ok=False, error=answer.reason or f"the call of {call.name!r} failed")
    return tools.outside_result(answer.output or "")
