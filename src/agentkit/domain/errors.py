"""Errors raised by the domain.

DomainError
 ├── IllegalTransition      a run status change the state machine forbids
 └── InvalidGoal            an empty or oversized goal (or another field of the run request that is wrong)
      └── InvalidOutputSchema  an output schema AgentKit cannot turn into typed output
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
