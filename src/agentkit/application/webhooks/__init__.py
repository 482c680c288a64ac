"""Webhooks: a run's events (requires_action, its terminal status) POSTed, signed, to its callback URL."""

from agentkit.application.webhooks.bell import DeliveryBell
from agentkit.application.webhooks.deliver import DeliverWebhooks
from agentkit.application.webhooks.events import delivery_id, event_type
from agentkit.application.webhooks.notifier import RunPayload, WebhookNotifier
from agentkit.application.webhooks.queries import ListRunWebhooks

__all__ = [
    "DeliverWebhooks",
    "DeliveryBell",
    "ListRunWebhooks",
    "RunPayload",
    "WebhookNotifier",
    "delivery_id",
    "event_type",
]
