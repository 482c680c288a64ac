"""Webhook settings are checked at start-up: one line naming the variable."""

import pytest

from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.entrypoints.wiring import make_container
from agentkit.entrypoints.wiring.providers.webhooks import webhook_signer
from agentkit.entrypoints.wiring.settings import load_settings
from tests.webhook_receiver import new_secret


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"WEBHOOK_URL": "https://hooks.example/in"}, "WEBHOOK_SECRET: required when WEBHOOK_URL is set"),
        ({"WEBHOOK_SECRET": "s3cret"}, "WEBHOOK_SECRET: expected whsec_ followed by base64"),
        ({"WEBHOOK_SECRET": "whsec_QUJD"}, "WEBHOOK_SECRET: the key is 3 bytes; use 24 to 64"),
        ({"WEBHOOK_SECRET": new_secret(), "WEBHOOK_URL": "ftp://x"}, "WEBHOOK_URL: expected an http:// or https://"),
    ],
)
async def test_a_bad_webhook_setting_stops_start_up_with_one_line(env: dict[str, str], says: str) -> None:
    settings = load_settings({"STATE_BACKEND": "memory", **env})
    container = make_container(settings)
    try:
        with pytest.raises(ConfigurationError) as raised:
            await container.get(RunScheduler)  # what serving builds first
    finally:
        await container.close()

    assert str(raised.value).startswith(says)
    assert "\n" not in str(raised.value)


def test_without_a_secret_webhooks_are_off_and_with_one_they_sign() -> None:
    assert webhook_signer(load_settings({}).webhooks) is None
    assert webhook_signer(load_settings({"WEBHOOK_SECRET": new_secret()}).webhooks) is not None
