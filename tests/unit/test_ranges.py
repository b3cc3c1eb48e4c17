"""Address ranges (app/domain/ranges.py): parsing CIDRs and first-last spans,
the ECS scope of a match, and the most specific of nested ranges."""

from __future__ import annotations

from ipaddress import ip_address

import pytest

from app.domain.ranges import AddressRange, block_scope, most_specific, parse_range


@pytest.mark.parametrize(
    ("text", "version", "first", "last"),
    [
        ("10.1.0.0/16", 4, "10.1.0.0", "10.1.255.255"),
        ("10.0.0.5-10.0.0.9", 4, "10.0.0.5", "10.0.0.9"),
        (" 10.0.0.5 - 10.0.0.9 ", 4, "10.0.0.5", "10.0.0.9"),
        ("10.0.0.7-10.0.0.7", 4, "10.0.0.7", "10.0.0.7"),
        ("0.0.0.0/0", 4, "0.0.0.0", "255.255.255.255"),
        ("192.0.2.1/32", 4, "192.0.2.1", "192.0.2.1"),
        ("2001:db8::/32", 6, "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"),
        ("2001:db8::10-2001:db8::1f", 6, "2001:db8::10", "2001:db8::1f"),
        ("::/0", 6, "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
    ],
)
def test_parse_accepts_cidrs_and_first_last_spans(text, version, first, last) -> None:
    parsed = parse_range(text)
    assert parsed.version == version
    assert parsed.first == int(ip_address(first))
    assert parsed.last == int(ip_address(last))
    assert parsed.text == text.strip()


@pytest.mark.parametrize(
    "text",
    [
        "10.1.2.0/16",  # host bits set: not a network address
        "2001:db8::1/64",
        "10.0.0.9-10.0.0.5",  # first after last
        "2001:db8::20-2001:db8::1f",
        "10.0.0.1-2001:db8::1",  # mixed families
        "2001:db8::1-10.0.0.1",
        "10.0.0.0/33",
        "10.0.0.256-10.0.1.0",
        "not-an-address",
        "",
        "10.0.0.0/8-10.1.0.0",
    ],
)
def test_parse_refuses_what_is_not_a_range(text: str) -> None:
    with pytest.raises(ValueError):
        parse_range(text)


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("10.1.0.0/16", ["10.1.0.0", "10.1.2.3", "10.1.255.255"], ["10.0.255.255"]),
        ("10.0.0.5-10.0.0.9", ["10.0.0.5", "10.0.0.9"], ["10.0.0.4", "10.0.0.10"]),
        ("2001:db8::/32", ["2001:db8:1::1"], ["2001:db9::", "10.0.0.1"]),
        ("0.0.0.0/0", ["1.2.3.4", "255.255.255.255"], ["::1", "::ffff:1.2.3.4"]),
    ],
)
def test_contains_is_inclusive_and_per_family(text, inside, outside) -> None:
    r = parse_range(text)
    assert all(r.contains(ip_address(a)) for a in inside)
    assert not any(r.contains(ip_address(a)) for a in outside)


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("10.0.0.0/24", "10.0.0.128/25", True),
        ("10.0.0.0-10.0.0.9", "10.0.0.9-10.0.0.20", True),  # one shared address
        ("10.0.0.0-10.0.0.9", "10.0.0.10-10.0.0.20", False),
        ("10.0.0.0/8", "11.0.0.0/8", False),
        ("0.0.0.0/0", "::/0", False),
    ],
)
def test_overlaps(a: str, b: str, overlap: bool) -> None:
    assert parse_range(a).overlaps(parse_range(b)) is overlap
    assert parse_range(b).overlaps(parse_range(a)) is overlap


@pytest.mark.parametrize(
    ("client", "inside", "scope"),
    [
        ("10.1.2.3", "10.1.0.0/16", 16),
        ("10.1.2.3", "10.0.0.0/8", 8),
        ("10.0.0.8", "10.0.0.5-10.0.0.9", 31),  # 10.0.0.8/31
        ("10.0.0.5", "10.0.0.5-10.0.0.9", 32),
        ("10.0.0.6", "10.0.0.5-10.0.0.9", 31),
        ("10.0.0.130", "10.0.0.0-10.0.0.200", 26),  # 10.0.0.128/26; /25 ends at 255
        ("1.2.3.4", "0.0.0.0/0", 0),
        ("2001:db8::1", "2001:db8::/32", 32),
        ("2001:db8::18", "2001:db8::10-2001:db8::1f", 124),
    ],
)
def test_block_scope_inside_a_match(client, inside, scope) -> None:
    assert block_scope(ip_address(client), parse_range(inside), ()) == scope


@pytest.mark.parametrize(
    ("client", "avoid", "scope"),
    [
        ("10.2.0.1", ["10.1.0.0/16"], 15),
        ("10.0.0.4", ["10.0.0.5-10.0.0.9"], 32),
        ("10.0.0.10", ["10.0.0.5-10.0.0.9"], 31),
        ("10.0.0.16", ["10.0.0.5-10.0.0.9"], 28),  # 10.0.0.16/28; /27 holds 5-9
        ("192.168.1.1", ["10.0.0.0/8"], 1),
        ("192.168.1.1", [], 0),  # nothing to avoid: the answer is the same for all
        ("2001:db8::1", ["10.0.0.0/8"], 0),  # other family
        ("2001:db8:3::1", ["2001:db8:2::/48"], 48),
        ("10.0.0.5", ["10.0.0.5-10.0.0.9"], 32),  # inside: no clear block at all
    ],
)
def test_block_scope_clear_of_every_range(client, avoid, scope) -> None:
    ranges = [parse_range(r) for r in avoid]
    assert block_scope(ip_address(client), None, ranges) == scope


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        ("10.1.2.3", "10.1.2.0/24"),
        ("10.1.9.9", "10.1.0.0/16"),
        ("10.9.9.9", "10.0.0.0/8"),
        ("10.1.2.7", "10.1.2.5-10.1.2.9"),
        ("11.0.0.1", None),
        ("2001:db8::1", None),
    ],
)
def test_most_specific_is_the_smallest_range_holding_the_client(client, expected):
    ranges = [
        parse_range(t)
        for t in ("10.0.0.0/8", "10.1.2.0/24", "10.1.0.0/16", "10.1.2.5-10.1.2.9")
    ]
    hit = most_specific(ranges, ip_address(client))
    assert (hit.text if hit is not None else None) == expected


def test_most_specific_of_nothing_is_none() -> None:
    assert most_specific([], ip_address("10.0.0.1")) is None


def test_a_range_is_a_plain_value() -> None:
    assert parse_range("10.0.0.0/30") == AddressRange(
        4, int(ip_address("10.0.0.0")), int(ip_address("10.0.0.3")), "10.0.0.0/30"
    )
