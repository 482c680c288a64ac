"""Scheduling providers: inline or queue (RUN_MODE); the SAQ queue of runs, and a worker process's worker."""

from collections.abc import AsyncIterator

from dishka import AnyOf, Provider, Scope, provide
from saq.queue.redis import RedisQueue

from agentkit.adapters.queue import DEQUEUE_TIMEOUT_S, QueueRunScheduler, RunJobs, RunWorker
from agentkit.adapters.redis import MAX_CONNECTIONS, create_redis
from agentkit.adapters.scheduling import InlineRunScheduler, Recovery
from agentkit.application.agent import AgentLoop
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.entrypoints.wiring.providers.state import StateConnections
from agentkit.entrypoints.wiring.settings import Settings, runs_in_flight_cap
from agentkit.entrypoints.wiring.startup import StateEndpoints

# SAQ's own timeout for a job is a backstop past the run's limits (see RunJobs); this much beyond them.
_JOB_TIMEOUT_MARGIN_S = 60


class QueueProvider(Provider):
    """Binds RunJobs, QueueRunScheduler and RunWorker (used only in queue mode and by `agentkit worker`)."""

    scope = Scope.APP

    @provide
    async def jobs(
        self, conns: StateConnections, endpoints: StateEndpoints, settings: Settings
    ) -> AsyncIterator[RunJobs]:
        """The SAQ queue on AgentKit's Redis, through a client of its own (closed with the container).

        A worker's idle slots each hold a connection in a blocking take (BLMOVE) for up to
        DEQUEUE_TIMEOUT_S: on the shared client, WORKER_CONCURRENCY of them left the run's own traffic
        (its events, fragments, sessions) waiting up to a second a command for a connection once the
        concurrency neared the pool's size. The queue's client has room for every slot's take and
        the shared pool's size beside them (opened as needed), and waits past a take for a reply.
        """
        if conns.redis is None or conns.engine is None or endpoints.redis_url is None:
            raise ConfigurationError(
                "RUN_MODE: queue mode needs PostgreSQL and Redis that every process reaches "
                "(set DATABASE_URL and REDIS_URL, or STATE_BACKEND=embedded on one machine)"
            )
        loop, state = settings.loop, settings.state
        timeout_s = round(loop.run_timeout_s + loop.run_store_retry_s) + _JOB_TIMEOUT_MARGIN_S
        redis = create_redis(
            endpoints.redis_url,
            password=state.redis_password,
            socket_timeout_s=DEQUEUE_TIMEOUT_S + state.redis_socket_timeout_s,
            connect_timeout_s=state.redis_connect_timeout_s,
            max_connections=queue_connections(settings),
        )
        try:
            yield RunJobs(RedisQueue(redis, name=loop.run_queue_name), job_timeout_s=timeout_s)
        finally:
            await redis.aclose()

    @provide
    def queue_scheduler(self, jobs: RunJobs, events: RunEvents, recovery: Recovery) -> QueueRunScheduler:
        """Runs go on the queue; lapsed runs are enqueued again by this process's sweeper."""
        return QueueRunScheduler(jobs, events=events, recovery=recovery)

    @provide
    def worker(
        self,
        jobs: RunJobs,
        loop: AgentLoop,
        runs: RunRepository,
        events: RunEvents,
        scheduler: QueueRunScheduler,
        settings: Settings,
        recovery: Recovery,
    ) -> RunWorker:
        """A worker process's SAQ worker: WORKER_CONCURRENCY runs at once."""
        return RunWorker(
            jobs=jobs,
            loop=loop,
            runs=runs,
            events=events,
            scheduler=scheduler,
            concurrency=settings.loop.worker_concurrency,
            shutdown_grace_s=settings.loop.shutdown_grace_s,
            lease_s=settings.loop.run_lease_s,
            tree=recovery.tree,
        )


class InlineSchedulingProvider(Provider):
    """RUN_MODE=inline: runs execute as tasks of the process that accepted them, which also counts them."""

    scope = Scope.APP

    @provide(provides=AnyOf[RunScheduler, RunAdmission])
    def scheduler(
        self, loop: AgentLoop, settings: Settings, events: RunEvents, recovery: Recovery
    ) -> InlineRunScheduler:
        """The inline scheduler, its sweeper beside it."""
        return InlineRunScheduler(loop, events=events, max_in_flight=runs_in_flight_cap(settings), recovery=recovery)


class QueueSchedulingProvider(Provider):
    """RUN_MODE=queue: runs go on the SAQ queue; `agentkit worker` processes execute them."""

    scope = Scope.APP

    @provide(provides=AnyOf[RunScheduler, RunAdmission])
    def scheduler(self, scheduler: QueueRunScheduler) -> QueueRunScheduler:
        """The queue scheduler, its sweeper beside it."""
        return scheduler


def queue_connections(settings: Settings) -> int:
    """The queue client's pool: a blocking take per worker slot, and the shared client's room for the rest
    (enqueues from the API's requests, job updates, SAQ's sweeps and its pub/sub)."""
    return settings.loop.worker_concurrency + MAX_CONNECTIONS


def scheduling_for(settings: Settings) -> Provider:
    """The provider of the RunScheduler that RUN_MODE names."""
    return QueueSchedulingProvider() if settings.loop.run_mode == "queue" else InlineSchedulingProvider()
