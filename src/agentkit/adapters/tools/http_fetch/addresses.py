"""Which hosts and addresses http_fetch may contact: public unicast addresses only.

An address is allowed only when Python's `is_global` says so and none of the special cases
below applies (some special ranges count as "global" in `ipaddress`: multicast, site-local
IPv6, 6to4 addresses that embed a private IPv4 one). Hosts written as numbers in anything but
plain dotted decimal (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) are refused outright:
parsers disagree about them, which is exactly what SSRF payloads rely on.
"""

import ipaddress
import re
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

CLOUD_METADATA: Final = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, ...
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
_REFUSED_NAMES: Final = frozenset({"localhost", "metadata", "metadata.google.internal"})
_HOSTNAME: Final = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*")
_NUMERIC_LABEL: Final = re.compile(r"(0x[0-9a-f]*|[0-9]+)")


def address_problem(address: IPAddress) -> str | None:
    """Why `address` may not be contacted, or None when it is a public unicast address."""
    if address in CLOUD_METADATA:
        return "a cloud metadata address"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"an IPv4-mapped IPv6 address (of {address.ipv4_mapped})"
        if address.sixtofour is not None and address_problem(address.sixtofour) is not None:
            return f"a 6to4 address embedding {address.sixtofour}"
        if address.is_site_local:
            return "a site-local address"
    checks = (
        (address.is_unspecified, "the unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
    )
    for applies, reason in checks:
        if applies:
            return reason
    if not address.is_global:
        return "not a public address"
    return None


def literal_address(host: str) -> IPAddress | None:
    """The address a host names directly (`93.184.216.34`, `2606:4700::1111`), or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def host_problem(host: str) -> str | None:
    """Why a host name (not an address literal) is refused before it is even resolved, or None.

    Args:
        host: The lower-case ASCII (IDNA-encoded) host, without a trailing dot.
    """
    if not host:
        return "the URL has no host"
    if "%" in host:
        return "the host contains '%' (percent-encoding or an IPv6 zone)"
    labels = host.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        decoded = legacy_ipv4(host)
        meaning = f" (it means {decoded})" if decoded is not None else ""
        return f"{host!r} is a non-standard numeric address{meaning}; write addresses in dotted decimal"
    if host in _REFUSED_NAMES or host.endswith(".localhost"):
        return f"{host!r} is a local name"
    if len(host) > 253 or not _HOSTNAME.fullmatch(host):
        return f"{host!r} is not a valid host name"
    return None


def legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Decode the old inet_aton forms: 1 to 4 parts, each decimal, octal (`0177`) or hex (`0x7f`).

    Used to explain a refusal (`2130706433` means 127.0.0.1), never to allow a host.
    """
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers: list[int] = []
    for part in parts:
        if re.fullmatch(r"0x[0-9a-f]*", part):
            numbers.append(int(part[2:] or "0", 16))
        elif re.fullmatch(r"0[0-7]+", part):
            numbers.append(int(part, 8))
        elif re.fullmatch(r"0|[1-9][0-9]*", part):
            numbers.append(int(part))
        else:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, number in enumerate(head):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)
