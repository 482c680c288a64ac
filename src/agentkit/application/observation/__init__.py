"""Observation: stored runs and steps handed to the run observers (event log, metrics, tracing), off the loop's path."""

from agentkit.application.observation.event_feed import RunEventFeed
from agentkit.application.observation.fanout import RunObservers
from agentkit.application.observation.observed_runs import ObservedRunRepository

__all__ = ["ObservedRunRepository", "RunEventFeed", "RunObservers"]
