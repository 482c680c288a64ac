"""The RunAdmission port: how many runs this process takes on at once."""

from abc import abstractmethod
from typing import Protocol


class RunAdmission(Protocol):
    """Places for runs in flight in this process; a new run takes one before it is stored.

    A place is held from `try_reserve` until the run has been handed to the scheduler, which then
    counts the run itself until it ends; the caller releases its reservation at that point, or when
    creating the run failed. Reserving is synchronous, so no other request can take the same place
    between the check and the count.
    """

    @abstractmethod
    def try_reserve(self) -> bool:
        """Take a place if one is free; False when every place is taken."""

    @abstractmethod
    def release(self) -> None:
        """Give back a place that `try_reserve` took."""

    @abstractmethod
    def has_room(self) -> bool:
        """Whether a place is free now: a hint for refusing early and cheaply, never a reservation."""
