"""The operator's latency table (app/domain/latency.py): the most specific entry
covering a client, and the ECS scope that entry decides."""

from __future__ import annotations

from ipaddress import ip_address

import pytest

from app.domain.latency import LatencyEntry, LatencyTable
from app.domain.ranges import parse_range

TABLE = LatencyTable(
    tuple(
        LatencyEntry(parse_range(net), {"aws:eu-west-1": rtt})
        for net, rtt in [
            ("198.51.0.0/16", 16.0),
            ("198.51.100.0/24", 24.0),
            ("198.51.100.128/25", 25.0),
            ("203.0.113.10-203.0.113.20", 11.0),
            ("2001:db8::/32", 32.0),
            ("2001:db8:5::/48", 48.0),
        ]
    )
)


@pytest.mark.parametrize(
    ("client", "network", "scope"),
    [
        ("198.51.100.200", "198.51.100.128/25", 25),
        ("198.51.100.1", "198.51.100.0/24", 25),  # 198.51.100.0/25, clear of the /25
        ("198.51.7.1", "198.51.0.0/16", 18),  # 198.51.0.0/17 holds 198.51.100.0/24
        ("198.51.200.1", "198.51.0.0/16", 17),
        ("203.0.113.12", "203.0.113.10-203.0.113.20", 30),  # 12-15
        ("203.0.113.10", "203.0.113.10-203.0.113.20", 31),
        ("203.0.113.20", "203.0.113.10-203.0.113.20", 32),
        ("2001:db8:5::1", "2001:db8:5::/48", 48),
        ("2001:db8:1::1", "2001:db8::/32", 46),  # 2001:db8::/46 is clear of :5::/48
        ("2001:db8:ffff::1", "2001:db8::/32", 33),
    ],
)
def test_lookup_finds_the_most_specific_entry_and_its_scope(client, network, scope):
    hit = TABLE.lookup(ip_address(client))
    assert hit is not None
    entry, got = hit
    assert entry.network.text == network
    assert got == scope


@pytest.mark.parametrize("client", ["192.0.2.1", "198.52.0.1", "2001:db9::1", "::1"])
def test_a_client_outside_every_entry_is_not_covered(client) -> None:
    assert TABLE.lookup(ip_address(client)) is None


def test_an_empty_table_covers_nobody() -> None:
    assert LatencyTable().lookup(ip_address("198.51.100.1")) is None


@pytest.mark.parametrize(
    ("net", "client", "scope"),
    [
        ("198.51.100.0/24", "198.51.100.77", 24),
        ("10.0.0.0/8", "10.200.0.1", 8),
        ("2001:db8:aa::/48", "2001:db8:aa::1", 48),
    ],
)
def test_a_lone_entry_decides_its_whole_block(net, client, scope) -> None:
    table = LatencyTable((LatencyEntry(parse_range(net), {"x": 1.0}),))
    hit = table.lookup(ip_address(client))
    assert hit is not None and hit[1] == scope
    assert hit[0].rtt_ms == {"x": 1.0}


def test_entry_order_does_not_matter() -> None:
    reversed_table = LatencyTable(tuple(reversed(TABLE.entries)))
    for client in ("198.51.100.200", "198.51.100.1", "198.51.7.1", "2001:db8:1::1"):
        a, b = (
            TABLE.lookup(ip_address(client)),
            reversed_table.lookup(ip_address(client)),
        )
        assert a is not None and b is not None
        assert (a[0].network, a[1]) == (b[0].network, b[1])
