"""Errors raised by the domain.

DomainError
 ├── IllegalTransition      a run status change the state machine forbids
 ├── ActionRefused          an answer to a paused run's call that does not fit the call (its `code` says how)
 └── InvalidGoal            an empty or oversized goal (or another field of the run request that is wrong)
      ├── InvalidOutputSchema  an output schema AgentKit cannot turn into typed output
      └── InvalidTools         approval-required tool names or client tools that do not fit the run
"""


class DomainError(Exception):
    """Base of every error the domain raises."""

    code = "domain_error"


class IllegalTransition(DomainError):
    """A run was asked to move to a status its current status cannot reach."""

    code = "illegal_transition"

    def __init__(self, current: str, target: str) -> None:
        super().__init__(f"a run cannot move from {current!r} to {target!r}")
        self.current = current
        self.target = target


class InvalidGoal(DomainError):
    """The goal is empty or longer than allowed."""

    code = "invalid_goal"


class InvalidOutputSchema(InvalidGoal):
    """The run's output schema is not one AgentKit can turn into a `final_result` tool; the message says where."""

    code = "invalid_output_schema"


class ActionRefused(DomainError):
    """An answer to a paused run's call that does not fit it.

    `code` says how: `unknown_call`, `already_answered`, `wrong_answer` (an approval for a client
    tool's call, or an output for a call that waits on an approval), `digest_mismatch`.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class InvalidTools(InvalidGoal):
    """A run's `approval_required` names a tool its agent lacks, or a client tool is not one it can offer."""

    code = "invalid_tools"
