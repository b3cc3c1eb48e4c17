"""Query metrics as a scrape sees them: queries by zone, profile, type and
rcode, answers by the endpoint handed out, replies by transport and path,
queries by the client's country, on the fast and the full path alike."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from random import Random

import dns.edns
import dns.message
import dns.rrset
import pytest

from app.dns import querystats
from app.dns.handler import DnsHandler
from app.dns.querystats import QueryStats, describe, rcode_label, type_label
from app.domain.model import AllDown, Config, EndpointKind, Method, SrvService
from app.domain.query import GeoFacts
from app.domain.snapshot import Snapshot, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

PEER = ("127.0.0.1", 5300)
WEB = make_profile(
    "web",
    Method.WEIGHTED,
    make_endpoint("a", "127.0.0.1", weight=1, id=1),
    make_endpoint("b", "127.0.0.2", weight=3, id=2),
    srv=(SrvService("_sip._udp", 5060),),
)
EU = make_profile("eu", Method.PRIORITY, make_endpoint("e1", "::1", id=3))
TOP = make_profile(
    "top",
    Method.PRIORITY,
    make_endpoint("to-eu", None, kind=EndpointKind.NESTED, child="eu", id=4),
)


def snapshot(generation: int = 1) -> Snapshot:
    return compile_snapshot(Config((make_zone(WEB, EU, TOP),)), {}, generation, 0.0)


def ask(handle: DnsHandler, name: str, rtype: str = "A", udp: bool = True) -> None:
    wire = dns.message.make_query(name, rtype).to_wire()
    assert handle(wire, PEER, udp) is not None


@pytest.mark.parametrize("fast", [True, False])
def test_queries_and_the_weighted_split_are_counted_on_either_path(
    fast: bool,
) -> None:
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(7), lambda: 0.0, lambda _: None, fast)
    for _ in range(400):
        ask(handle, "web.tm.example.")
    ask(handle, "_sip._udp.web.tm.example.", "SRV")
    ask(handle, "top.tm.example.", "AAAA", udp=False)
    ask(handle, "nowhere.tm.example.")
    ask(handle, "a.web.tm.example.")  # an endpoint's own name: no profile
    ask(handle, "elsewhere.example.")
    ask(handle, "web.tm.example.", "TYPE65000")
    totals = handle.totals()
    queries = totals.queries
    assert queries[("tm.example.", "web", "A", "NOERROR")] == 400
    assert queries[("tm.example.", "web", "SRV", "NOERROR")] == 1
    assert queries[("tm.example.", "top", "AAAA", "NOERROR")] == 1
    assert queries[("tm.example.", "", "A", "NXDOMAIN")] == 1
    assert queries[("tm.example.", "", "A", "NOERROR")] == 1
    assert queries[("", "", "A", "REFUSED")] == 1
    assert queries[("tm.example.", "web", "other", "NOERROR")] == 1
    a = totals.answers[("tm.example.", "web", "a")]
    b = totals.answers[("tm.example.", "web", "b")]
    assert a + b == 400 + 2  # the SRV answer names both targets
    assert 60 <= a <= 140, a  # weight 1 of 4, with a fixed seed
    assert totals.answers[("tm.example.", "top", "e1")] == 1  # the child's own
    path = "fast" if fast else "full"
    assert totals.paths == {("udp", path): 405, ("tcp", path): 1}


@pytest.mark.parametrize("fast", [True, False])
def test_counts_survive_a_new_snapshot_and_a_scrape_counts_nothing_twice(
    fast: bool,
) -> None:
    holder = [snapshot(1)]
    handle = DnsHandler(lambda: holder[0], Random(1), lambda: 0.0, lambda _: None, fast)
    ask(handle, "web.tm.example.")
    ask(handle, "nowhere.tm.example.")
    holder[0] = snapshot(2)  # the old wire cache is folded when it goes
    ask(handle, "web.tm.example.")
    first = dict(handle.totals().queries)
    assert first[("tm.example.", "web", "A", "NOERROR")] == 2
    assert first[("tm.example.", "", "A", "NXDOMAIN")] == 1
    assert handle.totals().queries == first


def test_the_full_path_labels_early_rather_than_keep_many_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Random names on the full path: kept unlabelled up to a bound, then
    labelled at once, so a flood costs no memory and loses no count."""
    monkeypatch.setattr(querystats, "MAX_FULL", 2)
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, lambda _: None, False)
    for i in range(5):
        ask(handle, f"r{i}.tm.example.")
    ask(handle, "web.tm.example.")
    assert len(handle.stats._full) <= 2
    totals = handle.totals()
    assert totals.queries[("tm.example.", "", "A", "NXDOMAIN")] == 5
    assert totals.queries[("tm.example.", "web", "A", "NOERROR")] == 1
    assert totals.paths == {("udp", "full"): 6}


def test_the_full_path_keeps_one_count_per_answer_not_per_query() -> None:
    """Answers are kept by the identity of their record data, which the
    profile holds: 200 queries that hand out two endpoints, and ANY queries,
    make three counts, not 300."""
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, lambda _: None, False)
    for _ in range(200):
        ask(handle, "web.tm.example.")
    for _ in range(100):
        ask(handle, "web.tm.example.", "ANY")
    assert len(handle.stats._full) == 3
    totals = handle.totals()
    assert totals.queries[("tm.example.", "web", "A", "NOERROR")] == 200
    assert totals.queries[("tm.example.", "web", "ANY", "NOERROR")] == 100


def test_the_fast_path_keeps_one_count_per_stored_reply_whatever_the_options() -> None:
    """Replies that carry an ECS echo or a cookie are built per query; they are
    counted by the stored reply they came from, so 300 queries from 300
    networks make at most two counts (the two weighted answers), not 300."""
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, lambda _: None)
    for i in range(300):
        options = [
            dns.edns.ECSOption(f"10.{i // 256}.{i % 256}.0", 24),
            dns.edns.CookieOption(i.to_bytes(8, "big"), b""),
        ]
        query = dns.message.make_query("web.tm.example.", "A", use_edns=0)
        query.use_edns(0, options=options)
        assert handle(query.to_wire(), PEER, True) is not None
    cache = handle._wire_cache
    assert cache is not None
    assert sum(len(sent) for sent in cache.replies_sent) <= 2
    assert handle.totals().queries[("tm.example.", "web", "A", "NOERROR")] == 300


def test_labels_stay_bounded_and_a_stray_reply_is_skipped() -> None:
    assert type_label(1) == "A" and type_label(65000) == "other"
    assert rcode_label(3) == "NXDOMAIN" and rcode_label(11) == "11"
    stats = QueryStats()
    stats.fold(snapshot(), ({}, {b"\x00" * 4: 3}), {}, {})
    assert stats.queries == {} and stats.paths == {("udp", "fast"): 3}


def test_describe_reads_back_what_an_answer_carries() -> None:
    reply = dns.message.make_response(dns.message.make_query("x.tm.example.", "A"))
    reply.answer.append(
        dns.rrset.from_text("x.tm.example.", 60, "IN", "A", "192.0.2.1")
    )
    reply.answer.append(dns.rrset.from_text("x.tm.example.", 60, "IN", "TXT", '"t"'))
    assert describe(reply.to_wire()) == ("x.tm.example.", 1, 0, ["192.0.2.1"])
    with pytest.raises(ValueError, match="header"):
        describe(b"\x00")


PLACES = {
    IPv4Network("81.2.69.0/24"): "GB",
    IPv6Network("2001:db8::/32"): "NL",
    IPv4Network("10.0.0.0/8"): "DE",
}


def place(address: IPv4Address | IPv6Address) -> GeoFacts | None:
    for network, country in PLACES.items():
        if address.version == network.version and address in network:
            return GeoFacts(country=country)
    return None


def ask_from(
    handle: DnsHandler,
    host: str,
    subnet: str | None = None,
    udp: bool = True,
    name: str = "web.tm.example.",
) -> None:
    options = []
    if subnet is not None:
        address, _, length = subnet.partition("/")
        options = [dns.edns.ECSOption(address, int(length))]
    wire = dns.message.make_query(name, "A", use_edns=0, options=options).to_wire()
    assert handle(wire, (host, 5300), udp) is not None


@pytest.mark.parametrize("fast", [True, False])
def test_queries_are_counted_by_the_clients_country(fast: bool) -> None:
    """By the ECS subnet where there is one (not a length of 0: "do not use
    my subnet"), else the source; "unknown" where GeoIP places neither."""
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, place, fast)
    ask_from(handle, "127.0.0.1", "81.2.69.0/24")
    ask_from(handle, "127.0.0.1", "81.2.69.0/24", udp=False)
    ask_from(handle, "::1", "2001:db8:1::/48")
    ask_from(handle, "10.1.2.3")
    ask_from(handle, "10.1.2.3", "0.0.0.0/0")
    ask_from(handle, "127.0.0.1")
    ask_from(handle, "not-an-address")  # no socket gives this; still counted
    ask(handle, "nowhere.tm.example.")  # a not-found reply counts too
    assert handle.totals().countries == {"GB": 2, "NL": 1, "DE": 2, "unknown": 3}
    assert handle.totals().countries["GB"] == 2  # a scrape counts nothing twice


@pytest.mark.parametrize("fast", [True, False])
def test_bursts_and_turns_of_clients_are_counted_exactly(fast: bool) -> None:
    """The fast path counts a client's run of queries in one go: runs cut by
    a scrape, clients taking turns, and ECS subnets in runs all count every
    query once."""
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, place, fast)
    for _ in range(5):
        ask_from(handle, "81.2.69.1")
    assert handle.totals().countries == {"GB": 5}
    for _ in range(3):  # the same run, after the scrape
        ask_from(handle, "81.2.69.1")
        ask(handle, "nowhere.tm.example.")  # from PEER, not placed
    for _ in range(4):
        ask_from(handle, "10.0.0.1")
        ask_from(handle, "127.0.0.1", "81.2.69.0/24")
    for _ in range(2):
        ask_from(handle, "127.0.0.1", "10.9.0.0/16")
    assert handle.totals().countries == {"GB": 12, "DE": 6, "unknown": 3}


@pytest.mark.parametrize("fast", [True, False])
def test_clients_past_the_bound_count_as_unknown(
    fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flood from random sources: counted, but it makes no more entries."""
    monkeypatch.setattr(querystats, "MAX_CLIENTS", 3)  # both paths' bound
    current = snapshot()
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, place, fast)
    # One name, many clients.
    for i in range(10):
        ask_from(handle, f"10.0.0.{i}", name="eu.tm.example.")
    ask_from(handle, "10.0.0.0", name="eu.tm.example.")  # told apart: placed
    assert handle.totals().countries == {"DE": 4, "unknown": 7}
    for i in range(3):  # the next interval tells three apart again
        ask_from(handle, f"10.0.1.{i}", name="eu.tm.example.")
    assert handle.totals().countries == {"DE": 7, "unknown": 7}


@pytest.mark.parametrize("fast", [True, False])
def test_a_host_endpoint_is_counted_by_its_cname_and_a_fallback_by_nobody(
    fast: bool,
) -> None:
    host = make_profile(
        "cdn",
        Method.PRIORITY,
        make_endpoint(
            "edge", None, kind=EndpointKind.HOST, target="edge.example.net.", id=7
        ),
    )
    down = make_profile(
        "down",
        Method.PRIORITY,
        make_endpoint("x", "127.0.0.9", enabled=False, id=8),
        all_down=AllDown.FALLBACK,
        fallback=ip_address("127.0.0.99"),
    )
    current = compile_snapshot(Config((make_zone(host, down),)), {}, 1, 0.0)
    handle = DnsHandler(lambda: current, Random(1), lambda: 0.0, lambda _: None, fast)
    for _ in range(3):
        ask(handle, "cdn.tm.example.")
        ask(handle, "down.tm.example.")
    totals = handle.totals()
    assert totals.answers == {("tm.example.", "cdn", "edge"): 3}
    assert totals.queries[("tm.example.", "down", "A", "NOERROR")] == 3


@pytest.mark.parametrize("fast", [True, False])
def test_with_query_metrics_off_nothing_is_counted(fast: bool) -> None:
    """The setting `make bench` turns off to measure what counting costs."""
    current = snapshot()
    handle = DnsHandler(
        lambda: current,
        Random(1),
        lambda: 0.0,
        lambda _: None,
        fast,
        query_metrics=False,
    )
    ask(handle, "web.tm.example.")
    ask(handle, "nowhere.tm.example.")
    totals = handle.totals()
    assert totals.queries == {} and totals.paths == {} and totals.countries == {}
