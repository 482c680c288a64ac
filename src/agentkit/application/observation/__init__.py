"""Observation: runs and steps handed to the observers (the run event log, metrics, tracing), off the loop's path."""

from agentkit.application.observation.event_feed import RunEventFeed
from agentkit.application.observation.fanout import RunObservers
from agentkit.application.observation.observed_runs import ObservedRunRepository
from agentkit.application.observation.step_feed import ObserverStepSink

__all__ = ["ObservedRunRepository", "ObserverStepSink", "RunEventFeed", "RunObservers"]
