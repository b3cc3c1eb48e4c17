"""tmdns behind a real recursive resolver: Unbound delegating tm.example. to it.

What a user behind an ordinary resolver sees: the routed addresses and SRV
records, an SRV answer too big for UDP that still arrives whole (the resolver
had to retry over TCP), and negative answers that resolvers cache correctly.
"""

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import pytest

from tests.support.sample import APP
from tests.support.sample import ZONE as SAMPLE_ZONE
from tests.support.tmdns import Tmdns
from tests.support.unbound import EDNS_BUFFER_SIZE, Unbound

pytestmark = [pytest.mark.e2e]

ZONE = "tm.example."
BIG = 40  # endpoints in the weighted profile `big`
LONG_NAME = "endpoint-with-a-long-name-{:02d}"


async def delegate(tm: Tmdns) -> None:
    """The zone, a priority profile `app` and a weighted profile `big`, served."""
    await tm.ok(
        "POST",
        "/zones",
        SAMPLE_ZONE,
    )
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        APP,
    )
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "big",
            "method": "weighted",
            "monitor": {"protocol": "none"},
            "srv": [{"service": "_sip._udp", "port": 5060}],
            "endpoints": [
                {"name": LONG_NAME.format(i), "address": f"127.0.1.{i + 1}"}
                for i in range(BIG)
            ],
        },
    )

    async def served() -> bool:
        app = await tm.addresses("app.tm.example.")
        big = await tm.query("_sip._udp.big.tm.example.", "SRV", tcp=True)
        return app == ["127.0.0.1"] and sum(len(r) for r in big.answer) == BIG

    await tm.wait_for(served, limit=5.0)


def records(reply: dns.message.Message, rtype: str) -> list[str]:
    wanted = dns.rdatatype.from_text(rtype)
    return sorted(rd.to_text() for r in reply.answer if r.rdtype == wanted for rd in r)


def recursive_noerror(reply: dns.message.Message) -> None:
    """A resolver's answer: recursion available, not authoritative, NOERROR."""
    assert reply.rcode() == dns.rcode.NOERROR, dns.rcode.to_text(reply.rcode())
    assert reply.flags & dns.flags.RA
    assert not reply.flags & dns.flags.AA


def negative_soa(reply: dns.message.Message) -> None:
    """The zone's SOA in the authority section, so the resolver's clients can
    cache the negative answer (RFC 2308)."""
    soas = [r for r in reply.authority if r.rdtype == dns.rdatatype.SOA]
    assert [r.name.to_text() for r in soas] == [ZONE], reply.to_text()


async def test_addresses_and_srv_resolve_through_the_resolver(
    tm: Tmdns, unbound: Unbound
) -> None:
    await delegate(tm)

    a = await unbound.query("app.tm.example.", "A")
    recursive_noerror(a)
    assert records(a, "A") == ["127.0.0.1"]  # the primary of the priority list

    aaaa = await unbound.query("app.tm.example.", "AAAA")
    recursive_noerror(aaaa)
    assert records(aaaa, "AAAA") == ["::1"]

    udp = await unbound.query("_sip._udp.app.tm.example.", "SRV")
    recursive_noerror(udp)
    assert records(udp, "SRV") == [
        "1 1 5060 primary.app.tm.example.",
        "2 1 5060 secondary.app.tm.example.",
        "3 1 5060 six.app.tm.example.",
    ]
    tls = await unbound.query("_sip._tls.app.tm.example.", "SRV")
    recursive_noerror(tls)
    assert [r.split()[2] for r in records(tls, "SRV")] == ["5061"] * 3

    # Each SRV target resolves, through the resolver, to its endpoint's address.
    targets = {
        "primary.app.tm.example.": ("A", "127.0.0.1"),
        "secondary.app.tm.example.": ("A", "127.0.0.2"),
        "six.app.tm.example.": ("AAAA", "::1"),
    }
    for target, (rtype, address) in targets.items():
        reply = await unbound.query(target, rtype)
        recursive_noerror(reply)
        assert records(reply, rtype) == [address], target


async def test_an_srv_answer_too_big_for_udp_arrives_whole(
    tm: Tmdns, unbound: Unbound
) -> None:
    await delegate(tm)
    # Over UDP, at the payload size Unbound advertises, tmdns can only say "use TCP".
    direct = await tm.query(
        "_sip._udp.big.tm.example.", "SRV", use_edns=0, payload=EDNS_BUFFER_SIZE
    )
    assert direct.flags & dns.flags.TC
    assert not direct.answer

    # So the whole answer through Unbound means Unbound retried over TCP. (The
    # client asks Unbound over TCP too: Unbound's own UDP replies stop at 1232.)
    reply = await unbound.query("_sip._udp.big.tm.example.", "SRV", tcp=True)
    recursive_noerror(reply)
    srv = [rd for r in reply.answer if r.rdtype == dns.rdatatype.SRV for rd in r]
    assert len(reply.to_wire()) > EDNS_BUFFER_SIZE
    assert sorted(rd.target.to_text() for rd in srv) == sorted(
        f"{LONG_NAME.format(i)}.big.tm.example." for i in range(BIG)
    )
    assert {(rd.priority, rd.weight, rd.port) for rd in srv} == {(10, 1, 5060)}

    last = await unbound.query(f"{LONG_NAME.format(BIG - 1)}.big.tm.example.", "A")
    assert records(last, "A") == [f"127.0.1.{BIG}"]


async def test_negative_answers_through_the_resolver(
    tm: Tmdns, unbound: Unbound
) -> None:
    await delegate(tm)

    missing = await unbound.query("missing.tm.example.", "A")
    assert missing.rcode() == dns.rcode.NXDOMAIN
    assert not missing.answer
    negative_soa(missing)

    # The name exists, the type does not: NODATA, not NXDOMAIN.
    txt = await unbound.query("app.tm.example.", "TXT")
    recursive_noerror(txt)
    assert not txt.answer
    negative_soa(txt)

    # `_udp.app` has no records but `_sip._udp.app` is below it: an empty
    # non-terminal is NODATA (RFC 8020: NXDOMAIN would deny everything below).
    ent = await unbound.query("_udp.app.tm.example.", "A")
    recursive_noerror(ent)
    assert not ent.answer
    negative_soa(ent)
    below = await unbound.query("_sip._udp.app.tm.example.", "SRV")
    recursive_noerror(below)
    assert len(records(below, "SRV")) == 3

    # A name below a missing one is missing too.
    deeper = await unbound.query("_sip._udp.missing.tm.example.", "SRV")
    assert deeper.rcode() == dns.rcode.NXDOMAIN
