"""The WebhookTransport port: one signed POST of a delivery to its URL."""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol

from agentkit.domain.webhooks import AttemptOutcome, WebhookDelivery


class WebhookTransport(Protocol):
    """Signs a delivery's payload and POSTs it once; never raises.

    The URL is checked again at send time (the addresses its host resolves to now), and the
    connection goes to the checked address, so a name that was public when the run was accepted
    cannot reach a private address later.
    """

    @abstractmethod
    async def post(self, delivery: WebhookDelivery, *, at: datetime) -> AttemptOutcome:
        """POST the payload signed for the moment `at`; what came of it (an error is an outcome, not raised)."""
