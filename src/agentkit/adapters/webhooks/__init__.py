"""Webhook adapters: the callback URL guard (http_fetch's SSRF rules), the signed POST, the background sender."""

from agentkit.adapters.webhooks.guard import (
    FixedHostResolver,
    HostResolver,
    TargetUnresolvable,
    WebhookURLGuard,
)
from agentkit.adapters.webhooks.sender import WebhookSender
from agentkit.adapters.webhooks.transport import HttpWebhookTransport, signer

__all__ = [
    "FixedHostResolver",
    "HostResolver",
    "HttpWebhookTransport",
    "TargetUnresolvable",
    "WebhookSender",
    "WebhookURLGuard",
    "signer",
]
