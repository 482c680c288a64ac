"""Queue mode: runs handed to `agentkit worker` processes through a SAQ queue in Redis."""

from agentkit.adapters.queue.jobs import EXECUTE_RUN, RunJobs
from agentkit.adapters.queue.scheduler import QueueRunScheduler
from agentkit.adapters.queue.worker import DEQUEUE_TIMEOUT_S, RunWorker

__all__ = ["DEQUEUE_TIMEOUT_S", "EXECUTE_RUN", "QueueRunScheduler", "RunJobs", "RunWorker"]
