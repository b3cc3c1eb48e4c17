"""Static rrsets from the rules to the wire: what a zone may hold, what
answer() gives for them (records, CNAME, NODATA, referrals below a cut),
and the replies both answer paths send, read back with dnspython."""

from __future__ import annotations

import base64
import time
from dataclasses import replace
from random import Random

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import pytest

from app.dns.handler import DnsHandler
from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.explain import rdata_text
from app.domain.model import Config, Method, StaticData, StaticRRset, Zone
from app.domain.plain import plain
from app.domain.query import QueryContext, Rcode, RType
from app.domain.snapshot import Snapshot, compile_snapshot
from app.domain.static_rules import rrset_label
from app.domain.validation import Invalid, rrset_neighbour_names, zone_problems
from app.schemas.rrsets import RRsetIn, static_type
from app.snapshot_file import from_plain
from tests.builders import make_endpoint, make_profile, make_zone

APEX = "tm.example."
APP = make_profile("app", Method.PRIORITY, make_endpoint("a", "127.0.0.1", id=1))


def rrset(name: str, rtype: str, *records: str, ttl: int = 60) -> StaticRRset:
    fqdn = APEX if name == "@" else f"{name}.{APEX}"
    return RRsetIn(ttl=ttl, records=list(records)).to_domain(
        fqdn, static_type(rtype), APEX
    )


DELEGATED = (
    rrset("child", "NS", "ns1.child", "ns.example.net.", ttl=3600),
    rrset("ns1.child", "A", "127.0.0.53"),
    rrset("ns1.child", "AAAA", "::53"),
)
STATIC = (
    rrset("@", "MX", "10 mail"),
    rrset("@", "TXT", '"v=spf1 -all"'),
    rrset("www", "CNAME", "app"),
    rrset("mail", "A", "127.0.0.25"),
    rrset("_acme-challenge.app", "TXT", '"token"'),
    *DELEGATED,
)


def zone(*rrsets: StaticRRset) -> Zone:
    ordered = tuple(sorted(rrsets, key=lambda r: (r.name, r.rtype)))
    return replace(make_zone(APP), rrsets=ordered)


def snapshot(*rrsets: StaticRRset) -> Snapshot:
    return compile_snapshot(Config((zone(*rrsets),)), {}, 1, time.time())


def problems(*rrsets: StaticRRset, **over: object) -> list[str]:
    return [
        f"{p.field}: {p.message}" for p in zone_problems(replace(zone(*rrsets), **over))
    ]


def ask(shot: Snapshot, name: str, rtype: RType) -> object:
    ctx = QueryContext(None, 0, 0.0)
    return answer(shot, name, rtype, ctx, RandomDraw(Random(1)), explain=True)


def test_a_zone_of_good_rrsets_has_no_problems() -> None:
    assert problems(*STATIC) == []
    assert rrset_label(STATIC[0], APEX) == "@ MX"


@pytest.mark.parametrize(
    ("rrsets", "words"),
    [
        (
            (rrset("app", "TXT", '"x"'),),
            "app TXT: app.tm.example. is already owned by profile 'app'",
        ),
        ((rrset("@", "CNAME", "app"),), "the apex cannot have a CNAME"),
        ((rrset("@", "NS", "ns.example.net."),), "the apex's NS are the zone's 'ns'"),
        (
            (rrset("www", "CNAME", "app"), rrset("www", "TXT", '"x"')),
            "a CNAME has no other records beside it (TXT)",
        ),
        (
            (rrset("www", "CNAME", "app", "mail"),),
            "a CNAME rrset has exactly one record",
        ),
        (
            (rrset("child", "NS", "ns1.child"),),
            "name server ns1.child.tm.example. is inside the delegation",
        ),
        (
            (*DELEGATED, rrset("www.child", "A", "127.0.0.1")),
            "below the delegation at child.tm.example.",
        ),
        (
            (*DELEGATED, rrset("child", "TXT", '"x"')),
            "child.tm.example. is delegated (NS)",
        ),
        (
            (StaticRRset("x.other.example.", RType.TXT, 60, ()),),
            "is not inside the zone",
        ),
        (
            (StaticRRset(f"x.{APEX}", RType.SOA, 60, ()),),
            "type 6 cannot be a static rrset",
        ),
    ],
)
def test_each_rule_names_the_rrset_and_says_why(
    rrsets: tuple[StaticRRset, ...], words: str
) -> None:
    found = problems(*rrsets)
    assert any(words in p for p in found), found


def test_a_profile_below_a_delegation_is_refused_by_its_name() -> None:
    below = make_profile(
        "sip.child", Method.PRIORITY, make_endpoint("a", "127.0.0.1", id=9)
    )
    found = problems(*DELEGATED, profiles=(APP, below))
    assert any(
        p.startswith("name: profile 'sip.child'") and "below the delegation" in p
        for p in found
    ), found


def test_answers_for_static_names() -> None:
    shot = snapshot(*STATIC)
    mx = ask(shot, APEX, RType.MX)
    assert mx.rcode is Rcode.NOERROR and [r.rdata.text for r in mx.answer] == [
        "10 mail.tm.example."
    ]
    assert ask(shot, APEX, RType.SOA).answer[0].rtype is RType.SOA  # the zone's own
    cname = ask(shot, "www.tm.example.", RType.AAAA)
    assert [r.rtype for r in cname.answer] == [RType.CNAME]
    nodata = ask(shot, "mail.tm.example.", RType.TXT)
    assert nodata.rcode is Rcode.NOERROR and not nodata.answer and nodata.authority
    # _acme-challenge.app sits below a profile's name: its parent is no ENT
    # problem, and the profile still answers.
    assert ask(shot, "app.tm.example.", RType.A).answer
    assert ask(shot, "_acme-challenge.app.tm.example.", RType.TXT).answer


@pytest.mark.parametrize(
    "name", ["child.tm.example.", "ns1.child.tm.example.", "a.b.child.tm.example."]
)
def test_at_and_below_a_cut_tmdns_refers(name: str) -> None:
    result = ask(snapshot(*STATIC), name, RType.A)
    assert result.rcode is Rcode.NOERROR and not result.authoritative
    assert not result.answer
    assert [r.rtype for r in result.authority] == [RType.NS, RType.NS]
    assert sorted(str(r.rdata.text) for r in result.additional) == [
        "127.0.0.53",
        "::53",
    ]
    assert any("delegated at child.tm.example." in line for line in result.trace)


def test_ds_at_the_cut_is_the_parents_nodata() -> None:
    result = ask(snapshot(*STATIC), "child.tm.example.", RType.DS)
    assert result.authoritative and not result.answer and result.authority


@pytest.mark.parametrize("fast", [True, False])
def test_both_paths_send_the_records_and_the_referral(fast: bool) -> None:
    shot = snapshot(*STATIC)
    handle = DnsHandler(lambda: shot, Random(1), time.time, lambda _: None, fast)
    peer = ("127.0.0.1", 5300)

    def query(name: str, rtype: str) -> dns.message.Message:
        wire = dns.message.make_query(name, rtype, use_edns=0).to_wire()
        reply = handle(wire, peer, True)
        assert reply is not None
        return dns.message.from_wire(reply)

    for _ in range(2):  # the second time from stored replies on the fast path
        txt = query("_acme-challenge.app.tm.example.", "TXT")
        assert [r.to_text() for r in txt.answer[0]] == ['"token"']
        assert txt.flags & dns.flags.AA
        mx = query("tm.example.", "MX")
        assert [r.to_text() for r in mx.answer[0]] == ["10 mail.tm.example."]
        for name in ("x.child.tm.example.", f"r{_}.deep.child.tm.example."):
            referral = query(name, "A")
            assert referral.rcode() == dns.rcode.NOERROR
            assert not referral.flags & dns.flags.AA and not referral.answer
            assert referral.authority[0].rdtype == dns.rdatatype.NS
            assert {r.rdtype for r in referral.additional} == {
                dns.rdatatype.A,
                dns.rdatatype.AAAA,
            }
        nx = query("nowhere.tm.example.", "A")
        assert nx.rcode() == dns.rcode.NXDOMAIN
    # Counted like names outside profiles: under profile "".
    assert handle.totals().queries[(APEX, "", "TXT", "NOERROR")] == 2


def test_bad_record_data_is_refused_naming_each_record() -> None:
    with pytest.raises(Invalid) as caught:
        RRsetIn(records=["10 mail", "nonsense", "10 mail"]).to_domain(
            f"x.{APEX}", RType.MX, APEX
        )
    assert [(p.field, p.message.split(":")[0]) for p in caught.value.problems] == [
        ("records.1", "'nonsense' is not MX data"),
        ("records.2", "repeats records.0"),
    ]
    with pytest.raises(Invalid, match="is not one of"):
        static_type("SOA")


def test_odd_types_and_outside_names_are_labelled_for_the_message() -> None:
    odd = StaticRRset(f"x.{APEX}", 99, 60, ())
    assert rrset_label(odd, APEX) == "x 99"
    assert any("x 99: type 99 cannot be a static rrset" in p for p in problems(odd))


def test_the_profiles_a_static_name_could_collide_with() -> None:
    assert rrset_neighbour_names("_acme-challenge.sip.tm.example.", APEX) == {
        "_acme-challenge.sip",
        "sip",
        "@",
    }


def test_explain_and_the_snapshot_file_carry_a_record_as_written() -> None:
    shot = snapshot(*STATIC)
    [record] = ask(shot, APEX, RType.MX).answer
    assert rdata_text(record) == "10 mail.tm.example."
    data = STATIC[0].records[0]
    assert from_plain(StaticData, plain(data)) == data
    assert plain(data)["wire"] == base64.b64encode(data.wire).decode()
