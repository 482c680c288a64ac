"""In-memory adapters of every port: for tests, benchmarks and library use in one process."""

from agentkit.adapters.memory.clock import FixedClock, SequentialIdGenerator
from agentkit.adapters.memory.events import InMemoryRunEvents
from agentkit.adapters.memory.prices import FixedPriceTable
from agentkit.adapters.memory.rate_limiter import InMemoryRateLimiter
from agentkit.adapters.memory.run_event_log import InMemoryRunEventLog
from agentkit.adapters.memory.run_listing import InMemoryRunListing
from agentkit.adapters.memory.runs import InMemoryRunRepository
from agentkit.adapters.memory.sessions import InMemorySessionStore
from agentkit.adapters.memory.trace import FailingTraceSink, InMemoryTraceSink
from agentkit.adapters.memory.webhooks import InMemoryWebhookOutbox

__all__ = [
    "FailingTraceSink",
    "FixedClock",
    "FixedPriceTable",
    "InMemoryRateLimiter",
    "InMemoryRunEventLog",
    "InMemoryRunEvents",
    "InMemoryRunListing",
    "InMemoryRunRepository",
    "InMemorySessionStore",
    "InMemoryTraceSink",
    "InMemoryWebhookOutbox",
    "SequentialIdGenerator",
]
