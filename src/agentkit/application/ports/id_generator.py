"""The IdGenerator port."""

from abc import abstractmethod
from typing import Protocol

from agentkit.domain.ids import RunId


class IdGenerator(Protocol):
    """Makes new run ids."""

    @abstractmethod
    def new_run_id(self) -> RunId:
        """A new, unique run id."""
