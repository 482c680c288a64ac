"""http_fetch's address rules. Addresses here are only parsed and classified, never contacted."""

import ipaddress

import pytest

from agentkit.adapters.tools.http_fetch.addresses import address_problem, host_problem, legacy_ipv4


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("100.100.100.200", "cloud metadata"),
        ("100.64.0.1", "not a public address"),  # carrier-grade NAT
        ("0.0.0.0", "unspecified"),  # noqa: S104 - classified, not bound
        ("0.1.2.3", "private"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.1", "private"),  # documentation range
        ("198.18.0.1", "private"),  # benchmarking range
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("fd00:ec2::254", "cloud metadata"),
        ("ff02::1", "multicast"),
        ("ff0e::1", "multicast"),  # global-scope multicast: `is_global` alone would allow it
        ("fec0::1", "site-local"),  # deprecated site-local: `is_global` alone would allow it
        ("::ffff:127.0.0.1", "IPv4-mapped"),
        ("::ffff:10.0.0.1", "IPv4-mapped"),
        ("::ffff:169.254.169.254", "IPv4-mapped"),
        ("::ffff:8.8.8.8", "IPv4-mapped"),  # refused even when public: one rule, no parser games
        ("2002:7f00:1::", "6to4 address embedding 127.0.0.1"),
        ("2002:a00:1::", "6to4 address embedding 10.0.0.1"),
        ("2002:a9fe:a9fe::", "6to4 address embedding 169.254.169.254"),
        ("64:ff9b::7f00:1", "reserved"),  # NAT64 of 127.0.0.1
        ("::127.0.0.1", "reserved"),  # IPv4-compatible (deprecated)
        ("2001:db8::1", "private"),  # documentation range
        ("2001::1", "private"),  # Teredo
    ],
)
def test_refuses_internal_and_special_addresses(address: str, reason: str) -> None:
    problem = address_problem(ipaddress.ip_address(address))
    assert problem is not None
    assert reason in problem


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2001:4860:4860::8888", "2002:808:808::"]
)
def test_allows_public_unicast_addresses(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("host", "meaning"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),  # noqa: S104 - a string compared, nothing bound
        ("10.1", "10.0.0.1"),
        ("3232235777", "192.168.1.1"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("134744072", "8.8.8.8"),  # even a public one: write addresses plainly
    ],
)
def test_refuses_non_standard_numeric_hosts_and_says_what_they_mean(host: str, meaning: str) -> None:
    problem = host_problem(host)
    assert problem is not None
    assert "non-standard numeric address" in problem
    assert f"it means {meaning}" in problem


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.1.1.1", "99999999999", "0x1ffffffff", "example.123", "a.0x10"])
def test_refuses_numeric_looking_hosts_that_are_not_even_valid(host: str) -> None:
    problem = host_problem(host)
    assert problem is not None
    assert "non-standard numeric address" in problem


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("localhost", "local name"),
        ("app.localhost", "local name"),
        ("metadata.google.internal", "local name"),
        ("metadata", "local name"),
        ("", "no host"),
        ("%31%32%37.0.0.1", "percent"),
        ("exa mple.com", "not a valid host name"),
        ("-bad.example.com", "not a valid host name"),
        ("a..b", "not a valid host name"),
        ("x" * 64 + ".com", "not a valid host name"),
    ],
)
def test_refuses_local_and_malformed_names(host: str, reason: str) -> None:
    problem = host_problem(host)
    assert problem is not None
    assert reason in problem


@pytest.mark.parametrize(
    "host", ["example.com", "www.example.co.uk", "xn--bcher-kva.de", "a-b.example", "_dmarc.example.com"]
)
def test_plain_names_go_on_to_be_resolved(host: str) -> None:
    assert host_problem(host) is None


def test_legacy_forms_that_are_not_addresses_decode_to_nothing() -> None:
    assert legacy_ipv4("1.2.3.4.5") is None
    assert legacy_ipv4("256.1.1.1") is None
    assert legacy_ipv4("example.com") is None
    assert legacy_ipv4("08.1.1.1") is None  # 08 is neither octal nor plain decimal
