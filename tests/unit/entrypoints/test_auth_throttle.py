"""Failed API-key attempts throttled per client address; who counts as one address; what uvicorn trusts."""

import pytest
from litestar import Litestar

from agentkit.adapters.memory import FixedClock, InMemoryRateLimiter
from agentkit.application.errors import AuthThrottled
from agentkit.entrypoints.http.auth_throttle import FailedKeyThrottle, client_address
from agentkit.entrypoints.wiring.serving import server_config
from agentkit.entrypoints.wiring.settings import load_settings, runs_in_flight_cap


async def fail(throttle: FailedKeyThrottle, limiter: InMemoryRateLimiter, address: str) -> bool:
    """One failed attempt: True if it was still a 401, False if it was throttled."""
    try:
        throttle.check(address)
        await throttle.failed(address, limiter)
    except AuthThrottled:
        return False
    return True


async def test_past_the_burst_an_address_is_refused_until_its_oldest_failure_leaves_the_window() -> None:
    clock = FixedClock()
    limiter = InMemoryRateLimiter(clock)
    throttle = FailedKeyThrottle(limit_per_min=3, monotonic=clock.monotonic)

    first = [await fail(throttle, limiter, "10.0.0.1")]
    for _ in range(2):  # at 10 and 20 s
        clock.advance(10)
        first.append(await fail(throttle, limiter, "10.0.0.1"))
    later = [await fail(throttle, limiter, "10.0.0.1") for _ in range(5)]

    assert first == [True, True, True]
    assert later == [False] * 5
    with pytest.raises(AuthThrottled) as refused:
        throttle.check("10.0.0.1")
    assert refused.value.retry_after_s == 40  # the first failure leaves the 60 s window in 40 s
    assert refused.value.code == "auth_throttled"
    throttle.check("10.0.0.2")  # another address is not throttled
    clock.advance(40)
    assert [await fail(throttle, limiter, "10.0.0.1") for _ in range(2)] == [True, False]  # one place freed


async def test_a_throttled_address_costs_no_limiter_call() -> None:
    clock = FixedClock()
    limiter = InMemoryRateLimiter(clock)
    throttle = FailedKeyThrottle(limit_per_min=1, monotonic=clock.monotonic)
    await fail(throttle, limiter, "10.0.0.1")
    await fail(throttle, limiter, "10.0.0.1")  # refused by the limiter: the address is remembered

    for _ in range(1000):
        with pytest.raises(AuthThrottled):
            throttle.check("10.0.0.1")

    # the limiter still holds exactly the one counted failure: the refusals never reached it
    assert (await limiter.hit("auth-failures:10.0.0.1", limit=2, window_s=60)).remaining == 0


@pytest.mark.parametrize(
    ("host", "counted_as"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),  # same host's /64, same budget
        ("::ffff:203.0.113.7", "203.0.113.7"),  # an IPv4 client on a dual-stack socket
        ("testclient", "testclient"),
        (None, "unknown"),
    ],
)
def test_failures_are_counted_per_ipv4_address_and_per_ipv6_slash_64(host: str | None, counted_as: str) -> None:
    assert client_address(host) == counted_as


def test_x_forwarded_for_is_trusted_only_from_configured_proxies() -> None:
    app = Litestar([])

    direct = server_config(app, load_settings({}))
    proxied = server_config(app, load_settings({"FORWARDED_ALLOW_IPS": "10.0.0.5, 10.0.1.0/24"}))

    assert direct.proxy_headers is False  # uvicorn's own default trusts every loopback peer
    assert proxied.proxy_headers is True
    assert proxied.forwarded_allow_ips == ["10.0.0.5", "10.0.1.0/24"]


def test_the_cap_on_runs_in_flight_defaults_to_the_database_pool() -> None:
    assert runs_in_flight_cap(load_settings({})) == 30
    assert runs_in_flight_cap(load_settings({"DATABASE_POOL_SIZE": "10", "DATABASE_MAX_OVERFLOW": "5"})) == 15
    assert runs_in_flight_cap(load_settings({"MAX_RUNS_IN_FLIGHT": "7"})) == 7
