"""The strict query decoder on hand-built packets."""

from ipaddress import ip_address

import dns.edns
import dns.message
import pytest

from app.dns.wire import HEADER_LEN, Malformed, parse_query

HEADER = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00"


def query_with(*options: dns.edns.Option, version: int = 0) -> bytes:
    return dns.message.make_query(
        "App.TM.example.", "A", use_edns=version, options=list(options)
    ).to_wire()


def opt_record(owner: bytes = b"\x00", options: bytes = b"") -> bytes:
    return (
        owner
        + b"\x00\x29\x04\xd0\x00\x00\x00\x00"
        + len(options).to_bytes(2, "big")
        + options
    )


QUESTION = b"\x03app\x02tm\x07example\x00\x00\x01\x00\x01"


def test_a_plain_query_decodes_with_its_case_kept() -> None:
    query = parse_query(dns.message.make_query("App.TM.example.", "AAAA").to_wire())
    assert query.qname == "app.tm.example."
    assert query.labels == (b"App", b"TM", b"example")
    assert (query.qtype, query.qclass, query.edns) == (28, 1, None)


def test_edns_payload_version_and_do_bit() -> None:
    wire = dns.message.make_query(
        "a.tm.example.", "A", use_edns=0, payload=4096, want_dnssec=True
    ).to_wire()
    edns = parse_query(wire).edns
    assert edns is not None and (edns.payload, edns.version, edns.do) == (4096, 0, True)
    assert parse_query(query_with(version=1)).edns.version == 1


def test_ecs_is_decoded_and_its_raw_address_kept() -> None:
    edns = parse_query(query_with(dns.edns.ECSOption("192.0.2.0", 24))).edns
    assert edns is not None and edns.ecs is not None
    assert (edns.ecs.family, edns.ecs.source_prefix) == (1, 24)
    assert edns.ecs.address == ip_address("192.0.2.0")
    assert edns.ecs.raw_address == bytes([192, 0, 2])


def test_unknown_options_are_ignored() -> None:
    edns = parse_query(query_with(dns.edns.GenericOption(65001, b"xyz"))).edns
    assert edns is not None and edns.ecs is None


@pytest.mark.parametrize(
    "ecs",
    [
        b"\x00\x01\x21\x00" + bytes(5),  # /33 for IPv4
        b"\x00\x01\x18\x00\xc0\x00\x02\x01",  # /24 with a 4th octet: length mismatch
        b"\x00\x01\x18\x00\xc0\x00\x03",  # fine: /24 in 3 octets (control, below)
        b"\x00\x01\x17\x00\xc0\x00\x03",  # /23 with the 24th bit set
        b"\x00\x03\x08\x00\x01",  # family 3
        b"\x00\x02\x81\x00" + bytes(17),  # /129 for IPv6
        b"\x00\x01",  # too short
    ],
)
def test_invalid_ecs_is_malformed(ecs: bytes) -> None:
    option = b"\x00\x08" + len(ecs).to_bytes(2, "big") + ecs
    wire = HEADER + b"\x00\x01" + QUESTION + opt_record(options=option)
    if ecs == b"\x00\x01\x18\x00\xc0\x00\x03":
        assert parse_query(wire).edns.ecs.source_prefix == 24
        return
    with pytest.raises(Malformed):
        parse_query(wire)


@pytest.mark.parametrize(
    ("counts", "sections"),
    [
        (b"\x00\x00\x00\x02", opt_record() + opt_record()),  # two OPTs
        (b"\x00\x01\x00\x00", opt_record()),  # OPT in the answer section
        (b"\x00\x00\x00\x01", opt_record(owner=b"\x01a\x00")),  # OPT not owned by root
        (b"\x00\x00\x00\x03", opt_record()),  # more records than the message holds
    ],
)
def test_misplaced_or_repeated_opt_is_malformed(counts: bytes, sections: bytes) -> None:
    wire = b"\x12\x34\x01\x00\x00\x01" + counts + QUESTION + sections
    with pytest.raises(Malformed):
        parse_query(wire)


@pytest.mark.parametrize(
    "name",
    [
        b"\xc0\x0c",  # points at itself
        b"\x01a\xc0\x0c",  # points back to its own start: a loop
        b"\xc0\x20",  # points forward
        b"\xc0\x02",  # points into the header
        b"\x40" + b"a" * 64 + b"\x00",  # label type 01
        b"\x3f" + b"a" * 10,  # label runs past the end
        (b"\x3f" + b"a" * 63) * 4 + b"\x00",  # 257 octets
        b"\x03abc",  # no terminating root label
    ],
)
def test_bad_names_are_malformed(name: bytes) -> None:
    with pytest.raises(Malformed):
        parse_query(HEADER[:4] + b"\x00\x01" + bytes(6) + name + b"\x00\x01\x00\x01")


@pytest.mark.parametrize("qdcount", [0, 2])
def test_a_query_has_exactly_one_question(qdcount: int) -> None:
    wire = (
        b"\x12\x34\x01\x00" + qdcount.to_bytes(2, "big") + bytes(6) + QUESTION * qdcount
    )
    with pytest.raises(Malformed):
        parse_query(wire)


def test_a_backward_pointer_in_an_additional_record_is_fine() -> None:
    record = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01"
    wire = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01" + QUESTION + record
    assert parse_query(wire).qname == "app.tm.example."


def test_a_dot_inside_a_label_cannot_pose_as_two_labels() -> None:
    wire = HEADER + b"\x00\x00" + b"\x06app.tm\x07example\x00\x00\x01\x00\x01"
    assert parse_query(wire).qname != "app.tm.example."


def test_a_query_for_the_root_name_decodes_as_the_root() -> None:
    """A priming-style query for "." has no labels: its text form is "."."""
    query = parse_query(dns.message.make_query(".", "NS").to_wire())
    assert (query.qname, query.labels, query.qtype) == (".", (), 2)


def test_a_pointer_to_a_name_that_itself_ends_in_a_pointer_is_followed() -> None:
    """RFC 1035 §4.1.4 lets a pointer lead to a name that ends in another
    pointer: the name is read whole, and the next record starts right after
    the first pointer (here the OPT, which is still found)."""
    www = b"\x03www\xc0\x0c"  # www + pointer to the question's name
    a_record = b"\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00"
    chained = bytes((0xC0, HEADER_LEN + len(QUESTION)))  # to `www`, which points on
    wire = (
        b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x03"
        + QUESTION
        + (www + a_record + b"\x01")
        + (chained + a_record + b"\x02")
        + opt_record()
    )
    query = parse_query(wire)
    assert query.edns is not None and query.edns.payload == 1232
    # dnspython reads both records as owned by the same name
    (both,) = dns.message.from_wire(wire).additional
    assert (both.name.to_text(), len(both)) == ("www.app.tm.example.", 2)


@pytest.mark.parametrize(
    ("wire", "why"),
    [
        (b"\x12\x34\x01\x00\x00\x01\x00", "shorter than a DNS header"),
        (
            HEADER + b"\x00\x01" + QUESTION + b"\x00\x00\x29\x04",
            "record header runs past the end of the message",
        ),
        (
            HEADER + b"\x00\x01" + QUESTION + opt_record(options=b"\x00\x08\x00"),
            "truncated EDNS option",
        ),
        (
            HEADER
            + b"\x00\x01"
            + QUESTION
            + opt_record(options=(b"\x00\x08\x00\x04\x00\x01\x00\x00") * 2),
            "more than one ECS option",
        ),
        (
            HEADER
            + b"\x00\x01"
            + QUESTION
            + opt_record(options=(b"\x00\x0a\x00\x08" + b"client01") * 2),
            "more than one COOKIE option",
        ),
    ],
)
def test_cut_short_or_repeated_parts_are_malformed(wire: bytes, why: str) -> None:
    """Each becomes FORMERR (the handler's answer to Malformed), never a
    guess: a cut header or record, a cut option, an option given twice."""
    with pytest.raises(Malformed, match=why):
        parse_query(wire)
