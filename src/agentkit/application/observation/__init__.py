"""Observation: runs and steps handed to the configured observers (metrics, tracing), off the loop's path."""

from agentkit.application.observation.fanout import RunObservers
from agentkit.application.observation.observed_runs import ObservedRunRepository
from agentkit.application.observation.step_feed import ObserverStepSink

__all__ = ["ObservedRunRepository", "ObserverStepSink", "RunObservers"]
