"""The composition root: the only place that names concrete adapters.

`make_container(settings, *overrides)` builds a dishka container; later providers win, so tests
and entrypoints pass providers that swap an adapter without touching the rest.
"""

from agentkit.container.core import CoreProvider, ObserversProvider, StepObservers, make_container

__all__ = ["CoreProvider", "ObserversProvider", "StepObservers", "make_container"]
