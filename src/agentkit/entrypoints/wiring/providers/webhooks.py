"""Webhook providers: the callback URL guard, the outbox, the notifier on the run repository, the sender.

With no WEBHOOK_SECRET, webhooks are off: the run repository is not observed for them, a run that
asks for a callback_url is refused (422 `webhooks_not_configured`), and no sender runs.
"""

import msgspec
from dishka import Provider, Scope, provide
from standardwebhooks import Webhook

from agentkit.adapters.memory import InMemoryRunRepository, InMemoryWebhookOutbox
from agentkit.adapters.postgres.webhooks import SqlaWebhookOutbox
from agentkit.adapters.webhooks import HostResolver, HttpWebhookTransport, WebhookSender, WebhookURLGuard, signer
from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.background_work import BackgroundWork
from agentkit.application.ports.callback_url_guard import CallbackURLGuard
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.webhook_outbox import WebhookOutbox
from agentkit.application.webhooks import DeliverWebhooks, DeliveryBell, ListRunWebhooks, WebhookNotifier
from agentkit.domain.run import Run
from agentkit.domain.webhooks import RetryPolicy
from agentkit.entrypoints.http.dto.runs import run_view
from agentkit.entrypoints.wiring.providers.observability import ExtraObservers
from agentkit.entrypoints.wiring.providers.state import StateConnections
from agentkit.entrypoints.wiring.settings import Settings, WebhookSettings

# A claim holds a delivery this much longer than an attempt may take, so no second sender takes it meanwhile.
_HOLD_MARGIN_S = 30.0


def webhook_signer(settings: WebhookSettings) -> Webhook | None:
    """The signer of WEBHOOK_SECRET, None when webhooks are off; checks WEBHOOK_URL too.

    Raises:
        ConfigurationError: a secret that is not `whsec_` + base64 of 24 to 64 bytes, WEBHOOK_URL
            without a secret, or a WEBHOOK_URL that is not http(s).
    """
    url = settings.webhook_url
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise ConfigurationError(f"WEBHOOK_URL: expected an http:// or https:// URL, got {url[:100]!r}")
    if settings.webhook_secret is None:
        if url is not None:
            raise ConfigurationError("WEBHOOK_SECRET: required when WEBHOOK_URL is set (webhooks are signed)")
        return None
    try:
        return signer(settings.webhook_secret)
    except ValueError as exc:
        raise ConfigurationError(f"WEBHOOK_SECRET: {exc}") from None


def api_payload(run: Run) -> object:
    """The run as GET /v1/runs/{id} shows it: the `data` of its webhook events."""
    return msgspec.to_builtins(run_view(run))


class WebhooksProvider(Provider):
    """Binds HostResolver, the CallbackURLGuard (None when off), WebhookOutbox, WebhookNotifier, BackgroundWork
    and ListRunWebhooks; the notifier joins the run observers (ExtraObservers) when webhooks are on."""

    scope = Scope.APP

    @provide
    def signer(self, settings: Settings) -> Webhook | None:
        """The signer (None: webhooks are off)."""
        return webhook_signer(settings.webhooks)

    @provide
    def resolver(self) -> HostResolver:
        """The operating system's resolver (tests map their host names)."""
        return HostResolver()

    @provide
    def url_guard(self, resolver: HostResolver, settings: Settings) -> WebhookURLGuard:
        """http_fetch's SSRF rules, loopback allowed only with WEBHOOK_ALLOW_LOOPBACK."""
        return WebhookURLGuard(resolver=resolver, allow_loopback=settings.webhooks.webhook_allow_loopback)

    @provide
    def callback_guard(self, guard: WebhookURLGuard, signing: Webhook | None) -> CallbackURLGuard | None:
        """What CreateRun checks callback URLs with; None when webhooks are off (a callback is refused)."""
        return None if signing is None else guard

    @provide
    def outbox(self, conns: StateConnections, memory: InMemoryRunRepository) -> WebhookOutbox:
        """Deliveries in PostgreSQL (shared by every process, kept across restarts), or in memory."""
        if conns.engine is not None:
            return SqlaWebhookOutbox(conns.engine)
        kept = InMemoryWebhookOutbox()
        memory.on_forget(kept.forget)  # a forgotten run's deliveries that are over go with it
        return kept

    @provide
    def bell(self) -> DeliveryBell:
        """This process's word from the notifier to the sender."""
        return DeliveryBell()

    @provide
    def notifier(self, outbox: WebhookOutbox, clock: Clock, bell: DeliveryBell, settings: Settings) -> WebhookNotifier:
        """Stores a delivery for each webhook event of a stored run."""
        return WebhookNotifier(
            outbox=outbox, clock=clock, render=api_payload, bell=bell, default_url=settings.webhooks.webhook_url
        )

    @provide
    def webhook_observers(self, notifier: WebhookNotifier, signing: Webhook | None) -> ExtraObservers:
        """The notifier, among the run observers (none with webhooks off)."""
        return ExtraObservers(() if signing is None else (notifier,))

    @provide
    def background(
        self,
        outbox: WebhookOutbox,
        guard: WebhookURLGuard,
        signing: Webhook | None,
        notifier: WebhookNotifier,
        bell: DeliveryBell,
        clock: Clock,
        settings: Settings,
    ) -> BackgroundWork:
        """The webhook sender (nothing, with webhooks off: deliveries wait for a process that can sign)."""
        if signing is None:
            return _Idle()
        hooks = settings.webhooks
        transport = HttpWebhookTransport(guard=guard, signer=signing, timeout_s=hooks.webhook_timeout_s)
        deliver = DeliverWebhooks(
            outbox=outbox,
            transport=transport,
            clock=clock,
            policy=RetryPolicy(
                max_attempts=hooks.webhook_max_attempts,
                first_delay_s=hooks.webhook_retry_first_s,
                max_delay_s=hooks.webhook_retry_max_s,
            ),
            hold_s=hooks.webhook_timeout_s + _HOLD_MARGIN_S,
        )
        return WebhookSender(deliver=deliver, notifier=notifier, bell=bell, clock=clock, poll_s=hooks.webhook_poll_s)

    list_webhooks = provide(ListRunWebhooks, scope=Scope.REQUEST)


class _Idle(BackgroundWork):
    """No background work."""

    async def start(self) -> None:
        """Nothing to start."""

    async def stop(self) -> None:
        """Nothing to stop."""
