"""/v1/runs/{id}/webhooks: the run's webhook deliveries and each attempt."""

from dishka.integrations.litestar import FromDishka, inject
from litestar import Controller, get

from agentkit.application.webhooks import ListRunWebhooks
from agentkit.entrypoints.http.dto.webhooks import WebhookListView, webhook_list_view
from agentkit.entrypoints.http.problems import problem_responses
from agentkit.entrypoints.http.runs import Owner, RunIdPath, _run_id


class RunWebhooksController(Controller):
    """A run's webhook deliveries, for the run's key only (another key gets 404)."""

    path = "/runs"
    tags = ["runs"]  # noqa: RUF012 - Litestar reads it as a class attribute

    @get(
        "/{run_id:str}/webhooks",
        summary="Read a run's webhook deliveries",
        description=(
            "A run with a `callback_url` (or, with none, the server's WEBHOOK_URL) gets a POST when it enters "
            "`requires_action` and when it reaches its terminal status, signed per the Standard Webhooks spec "
            "(`webhook-id`, `webhook-timestamp`, `webhook-signature` headers; verify with the WEBHOOK_SECRET). "
            'The body is `{"type": "run.<status>", "timestamp": ..., "data": <the run as GET /v1/runs/{id} '
            "shows it>}`. A connection error, a timeout, 5xx or 429 is retried with exponential backoff and "
            "jitter (WEBHOOK_MAX_ATTEMPTS in all); any other answer ends the delivery `failed`. This lists each "
            "delivery, oldest first, with every attempt: when, the status code or the error, and how long it took."
        ),
        responses=problem_responses(401, 404, 503),
    )
    @inject
    async def webhooks(self, run_id: RunIdPath, owner: Owner, lister: FromDishka[ListRunWebhooks]) -> WebhookListView:
        """The run's deliveries and their attempts."""
        run, deliveries = await lister.execute(_run_id(run_id), owner)
        return webhook_list_view(run, deliveries)
