"""variants() (app/domain/variants.py): every answer a question can get, as the
DNS layer pre-encodes them, and which names depend on the client."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address

from app.domain.answer import Answer
from app.domain.model import Config, Endpoint, EndpointKind, Method, Profile, SrvService
from app.domain.query import GeoFacts, QueryContext, Rcode, RType
from app.domain.snapshot import Snapshot, compile_snapshot
from app.domain.variants import (
    MAX_VARIANTS,
    decided_by_place,
    depends_on_client,
    variants,
)
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import locator

SIP = SrvService("_sip._udp", 5060)
ONE = make_endpoint("one", "192.0.2.1", id=1, weight=3)
TWO = make_endpoint("two", "192.0.2.2", id=2, priority=2, weight=1)
THREE = make_endpoint("three", "192.0.2.3", id=3, priority=3)
FR = make_endpoint("fr", "192.0.2.31", geo=("FR",), id=31)
WORLD = make_endpoint("world", "192.0.2.34", geo=("WORLD",), priority=2, id=34)
LOCATE = locator({"198.51.100.0/24": GeoFacts("EU", "FR", None, prefix=22)})


def snapshot_of(*profiles: Profile) -> Snapshot:
    return compile_snapshot(Config((make_zone(*profiles),)), {}, 1, 0.0)


def to(child: str, eid: int, **over: object) -> Endpoint:
    return make_endpoint(
        f"to-{child}", None, kind=EndpointKind.NESTED, child=child, id=eid, **over
    )


def data(found: Answer) -> list[str]:
    return [str(r.rdata) for r in found.answer]


def test_a_name_without_a_random_choice_has_one_answer() -> None:
    """Priority answers are decided without a draw: one answer for everyone."""
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, ONE, TWO))
    found = variants(snapshot, "app.tm.example.", RType.A)
    assert found is not None and found.weights is None
    assert [data(a) for a in found.answers] == [["192.0.2.1"]]
    assert found.holds_for == 0


def test_a_weighted_name_has_one_answer_per_endpoint_with_its_weight() -> None:
    """The DNS layer picks among these as the full path would: by weight."""
    snapshot = snapshot_of(make_profile("web", Method.WEIGHTED, ONE, TWO))
    found = variants(snapshot, "web.tm.example.", RType.A)
    assert found is not None
    assert [data(a) for a in found.answers] == [["192.0.2.1"], ["192.0.2.2"]]
    assert found.weights == (3, 1)


def test_a_multivalue_name_has_one_answer_per_window_all_equally_likely() -> None:
    """Each window of max_return addresses, starting at each endpoint."""
    snapshot = snapshot_of(
        make_profile("mv", Method.MULTIVALUE, ONE, TWO, THREE, max_return=2)
    )
    found = variants(snapshot, "mv.tm.example.", RType.A)
    assert found is not None and found.weights is None
    assert [data(a) for a in found.answers] == [
        ["192.0.2.1", "192.0.2.2"],
        ["192.0.2.2", "192.0.2.3"],
        ["192.0.2.3", "192.0.2.1"],
    ]


def test_more_choices_than_the_limit_are_left_to_the_full_path() -> None:
    """A set too large to pre-encode is not enumerated at all."""
    many = [
        make_endpoint(f"e{i}", f"10.0.{i // 250}.{i % 250 + 1}", id=i + 1, priority=i)
        for i in range(MAX_VARIANTS + 1)
    ]
    snapshot = snapshot_of(make_profile("mv", Method.MULTIVALUE, *many))
    assert variants(snapshot, "mv.tm.example.", RType.A) is None
    fewer = snapshot_of(make_profile("mv", Method.MULTIVALUE, *many[:MAX_VARIANTS]))
    found = variants(fewer, "mv.tm.example.", RType.A)
    assert found is not None and len(found.answers) == MAX_VARIANTS


def test_a_missing_name_has_no_set_but_an_empty_non_terminal_has_nodata() -> None:
    """Names that do not exist are unbounded and not kept; a name between the
    apex and an SRV name exists, empty, with one NODATA answer."""
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, ONE, srv=(SIP,)))
    assert variants(snapshot, "nope.tm.example.", RType.A) is None
    found = variants(snapshot, "_udp.app.tm.example.", RType.A)
    assert found is not None
    [nodata] = found.answers
    assert nodata.rcode is Rcode.NOERROR and nodata.answer == ()


def test_a_client_dependent_name_is_enumerated_only_for_a_given_client() -> None:
    """Without a client its answers are not one set; for a client they are,
    and they hold for that client's whole GeoIP network."""
    snapshot = snapshot_of(make_profile("geo", Method.GEOGRAPHIC, FR, WORLD))
    assert variants(snapshot, "geo.tm.example.", RType.A) is None
    ctx = QueryContext(ip_address("198.51.100.7"), 32, 0.0, LOCATE)
    found = variants(snapshot, "geo.tm.example.", RType.A, ctx)
    assert found is not None
    assert [data(a) for a in found.answers] == [["192.0.2.31"]]
    assert found.holds_for == 22


def test_a_weighted_parent_of_a_priority_child_is_enumerated() -> None:
    """One draw (the parent's); the child decides without one."""
    child = make_profile("child", Method.PRIORITY, ONE, TWO)
    parent = make_profile(
        "app", Method.WEIGHTED, THREE, to("child", 9, priority=4, weight=2)
    )
    found = variants(
        snapshot_of(parent, child), "app.tm.example.", RType.A, QueryContext()
    )
    assert found is not None
    assert [data(a) for a in found.answers] == [["192.0.2.3"], ["192.0.2.1"]]
    assert found.weights == (1, 2)


def test_a_second_random_choice_is_left_to_the_full_path() -> None:
    """A weighted child under a weighted parent draws twice, so one answer per
    option of the first draw would miss answers the full path gives: whether
    the first option or a later one leads to the child, there is no set."""
    child = make_profile("child", Method.WEIGHTED, ONE, TWO)
    nested_first = make_profile(
        "first", Method.WEIGHTED, to("child", 8, priority=4), THREE
    )
    nested_later = make_profile(
        "later", Method.WEIGHTED, THREE, to("child", 9, priority=4)
    )
    snapshot = snapshot_of(nested_first, nested_later, child)
    ctx = QueryContext()
    assert variants(snapshot, "first.tm.example.", RType.A, ctx) is None
    assert variants(snapshot, "later.tm.example.", RType.A, ctx) is None


def test_which_names_depend_on_the_client() -> None:
    """Client-routed methods, and every profile that nests another, whatever
    the child's method; names that do not exist do not."""
    child = make_profile("child", Method.PRIORITY, ONE)
    snapshot = snapshot_of(
        make_profile("app", Method.PRIORITY, ONE),
        make_profile("geo", Method.GEOGRAPHIC, FR, WORLD, srv=(SIP,)),
        make_profile("top", Method.PRIORITY, to("child", 9)),
        child,
    )
    assert not depends_on_client(snapshot, "app.tm.example.")
    assert depends_on_client(snapshot, "geo.tm.example.")
    assert depends_on_client(snapshot, "_sip._udp.geo.tm.example.")
    assert depends_on_client(snapshot, "top.tm.example.")
    assert not depends_on_client(snapshot, "one.app.tm.example.")  # fixed address
    assert not depends_on_client(snapshot, "nope.tm.example.")


def test_which_names_are_decided_by_the_clients_place_alone() -> None:
    """Geographic names (A or SRV), and parents nesting only place-routed or
    client-independent children; not address-routed ones, not names that
    do not depend on the client at all, not missing names."""
    subnet = make_profile(
        "lan", Method.SUBNET, replace(ONE, subnets=("10.0.0.0/8",)), TWO
    )
    snapshot = snapshot_of(
        make_profile("geo", Method.GEOGRAPHIC, FR, WORLD, srv=(SIP,)),
        make_profile("app", Method.PRIORITY, ONE),
        subnet,
        make_profile("top", Method.GEOGRAPHIC, replace(to("app", 7), geo=("WORLD",))),
        make_profile("mixed", Method.GEOGRAPHIC, replace(to("lan", 8), geo=("WORLD",))),
    )
    assert decided_by_place(snapshot, "geo.tm.example.")
    assert decided_by_place(snapshot, "_sip._udp.geo.tm.example.")
    assert decided_by_place(snapshot, "top.tm.example.")
    assert not decided_by_place(snapshot, "mixed.tm.example.")
    assert not decided_by_place(snapshot, "lan.tm.example.")
    assert not decided_by_place(snapshot, "app.tm.example.")
    assert not decided_by_place(snapshot, "nope.tm.example.")
