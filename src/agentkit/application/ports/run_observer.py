"""The RunObserver port: metrics and tracing see every run's status changes and steps."""

from abc import abstractmethod
from typing import Protocol

from agentkit.application.ports.run_event_log import DeltaEvent
from agentkit.domain.ids import RunId
from agentkit.domain.run import Run
from agentkit.domain.steps import Step


class RunObserver(Protocol):
    """Sees runs change and steps happen (Prometheus metrics, OpenTelemetry spans).

    Both calls come on the event loop from the run's own path, after the change was stored: they
    must be quick, never block and never raise (the callers log and drop what escapes). With no
    observer configured nothing calls them at all.
    """

    @abstractmethod
    def on_run(self, run: Run) -> None:
        """A run was stored in this version: accepted, started, ended (or saved again unchanged)."""

    @abstractmethod
    def on_step(self, step: Step) -> None:
        """A step of a running run was recorded."""

    def on_delta(self, run_id: RunId, delta: DeltaEvent) -> None:
        """A fragment of an LLM step being written (streamed runs only).

        A default, not abstract: most observers want whole steps only, and one that does not
        override this is never called for fragments (there are many).
        """
        return None
