"""The bad-request corpus of test_bad_requests.py: a baseline
configuration, then requests the API must refuse with a 4xx naming the field.

A case's `field` is matched against the error's details (dotted body path, or
the query parameter or header); None means the body as a whole is at fault.
Paths are under /api/v1. Every monitor says protocol "none", so nothing here
can make the prober send a packet anywhere, even if a case is wrongly accepted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from tests.support.tmdns import TOKEN

NO_BODY = object()

# The baseline -------------------------------------------------------------

NONE = {"protocol": "none"}
ZONE: dict[str, Any] = {
    "name": "tm.example.",
    "ns": ["ns1.tm.example."],
    "glue": {"ns1.tm.example.": ["127.0.0.1"]},
}
# Its glue is what a bad PATCH takes away, so that tm.example. stays intact.
OTHER_ZONE: dict[str, Any] = {
    "name": "other.example.",
    "ns": ["ns1.other.example.", "ns1.tm.example."],
    "glue": {"ns1.other.example.": ["127.0.0.2"]},
}


def _profile(
    name: str, method: str, *endpoints: dict[str, Any], **more: Any
) -> dict[str, Any]:
    return {"name": name, "method": method, "monitor": NONE, **more} | {
        "endpoints": list(endpoints)
    }


def _address(name: str, address: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "address": address, **more}


BASELINE_PROFILES: dict[str, list[dict[str, Any]]] = {
    "tm.example.": [
        _profile(
            "prio",
            "priority",
            _address("a", "192.0.2.1"),
            _address("b", "192.0.2.2"),
            _address("c", "2001:db8::1"),
            srv=[{"service": "_sip._udp", "port": 5060}],
        ),
        _profile(
            "weighted",
            "weighted",
            _address("w1", "192.0.2.11", weight=3),
            _address("w2", "192.0.2.12"),
            {"name": "h", "kind": "host", "target": "svc.example.net."},
        ),
        _profile(
            "perf",
            "performance",
            _address("p1", "192.0.2.21", location={"region": "aws:eu-west-1"}),
            _address("p2", "192.0.2.22", location={"lat": 40.7, "lon": -74.0}),
        ),
        _profile(
            "geo",
            "geographic",
            _address("g1", "192.0.2.31", geo=["GEO-EU"]),
            _address("g2", "192.0.2.32", geo=["US", "CA"]),
            _address("g3", "192.0.2.33", geo=["WORLD"]),
        ),
        _profile(
            "multi",
            "multivalue",
            _address("m1", "192.0.2.41"),
            _address("m2", "192.0.2.42"),
        ),
        _profile(
            "subnet",
            "subnet",
            _address("s1", "192.0.2.51", subnets=["198.51.100.0/24"]),
            _address("s2", "192.0.2.52", subnets=["203.0.113.0/25"]),
        ),
        _profile(
            "outer",
            "priority",
            {"name": "n1", "kind": "nested", "child": "prio"},
            _address("x", "192.0.2.61"),
        ),
        # Targets of renames a lenient server might accept.
        _profile("spare1", "priority", _address("e1", "192.0.2.81")),
        _profile("spare2", "priority", _address("e1", "192.0.2.82")),
    ],
    "other.example.": [
        _profile("www", "weighted", _address("e1", "192.0.2.71")),
    ],
}
LATENCY = {"entries": [{"network": "198.51.100.0/24", "rtt": {"aws:eu-west-1": 20}}]}

# Paths and valid bodies that each case spoils in one place ----------------

ZONES = "/zones"
TM = "/zones/tm.example."
PROFILES = TM + "/profiles"
LATENCY_PATH = "/latency"


def prof(name: str) -> str:
    return f"{PROFILES}/{name}"


def eps(profile: str) -> str:
    return f"{prof(profile)}/endpoints"


EP_A = eps("prio") + "/a"


# Each new resource gets a name of its own: if a server wrongly accepts one
# case, the next is not refused for a duplicate name instead of its own fault.
_serial = itertools.count(1)


def fresh() -> str:
    return f"fresh{next(_serial)}"


def new_zone(**over: Any) -> dict[str, Any]:
    return {"name": fresh() + ".example.", "ns": ["ns1.tm.example."], **over}


def in_zone_ns(**over: Any) -> dict[str, Any]:
    """A zone whose name server lies inside it, so it needs glue."""
    name = fresh()
    return {"name": f"{name}.example", "ns": [f"ns1.{name}.example"], **over}


def new_profile(**over: Any) -> dict[str, Any]:
    body = _profile(fresh(), "priority", _address("e1", "192.0.2.201"))
    return body | over


def new_endpoint(**over: Any) -> dict[str, Any]:
    return _address(fresh(), "192.0.2.202") | over


def with_monitor(**over: Any) -> dict[str, Any]:
    return new_profile(monitor=NONE | over)


def many_endpoints(count: int) -> list[dict[str, Any]]:
    return [_address(f"e{i}", "192.0.2.201") for i in range(count)]


def deep(opening: bytes, closing: bytes, levels: int = 10_000) -> bytes:
    return opening * levels + b"1" + closing * levels


LABEL63 = "a" * 63
# Fits on its own (253 octets) but not joined to "tm.example.".
LONG_RELATIVE = ".".join([LABEL63, LABEL63, LABEL63, "d" * 61])
# A profile (200 octets absolute) whose 63-octet endpoint names cannot fit.
LONG_PROFILE = ".".join([LABEL63, LABEL63, "b" * 60])


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    path: str
    body: Any = NO_BODY  # a JSON value, or bytes sent as they are
    field: str | tuple[str, ...] | None = None
    status: int | tuple[int, ...] = 422
    content_type: str | None = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    token: str | None = TOKEN


def rows(
    group: str, method: str, path: str, table: list[tuple[Any, ...]]
) -> list[Case]:
    """One case per (id, body, field[, status]) row."""
    return [Case(f"{group}.{r[0]}", method, path, *r[1:]) for r in table]


def typed(
    group: str, method: str, path: str, build: Any, table: list[Any]
) -> list[Case]:
    """One case per (id, body field, value[, field named]) row: a valid body
    from `build` with that one field spoiled."""
    cases = []
    for suffix, key, value, *named in table:
        body = build(**{key: value})
        cases.append(Case(f"{group}.{suffix}", method, path, body, [*named, key][0]))
    return cases


# Zones --------------------------------------------------------------------

ZONE_FIELDS: list[tuple[Any, ...]] = [
    ("name-int", "name", 5),
    ("name-null", "name", None),
    ("name-root", "name", "."),
    ("name-empty", "name", ""),
    ("name-empty-label", "name", "bad..example."),
    ("name-label-64", "name", "a" * 64 + ".example."),
    ("name-over-255", "name", LONG_RELATIVE + ".example."),
    ("name-control", "name", "z\x07.example."),
    ("name-space", "name", "my zone.example."),
    ("name-star", "name", "*.example."),
    ("ns-string", "ns", "ns1.tm.example."),
    ("ns-int-item", "ns", [5]),
    ("ns-null", "ns", None),
    ("ns-empty", "ns", []),
    ("ns-14", "ns", [f"ns{i}.tm.example." for i in range(14)]),
    ("ns-bad-name", "ns", ["bad..ns.example."]),
    ("ns-control", "ns", ["ns1.\x01.example."]),
    ("soa_email-int", "soa_email", 5),
    ("soa_email-no-at", "soa_email", "hostmaster"),
    ("soa_email-two-at", "soa_email", "a@b@c.example"),
    ("soa_email-control", "soa_email", "host\x00master@tm.example"),
    ("negative_ttl-string", "negative_ttl", "60"),
    ("negative_ttl-bool", "negative_ttl", True),
    ("negative_ttl-float", "negative_ttl", 1.5),
    ("negative_ttl-null", "negative_ttl", None),
    ("negative_ttl-below", "negative_ttl", -1),
    ("negative_ttl-above", "negative_ttl", 604801),
    ("glue-list", "glue", ["127.0.0.1"]),
    ("glue-null", "glue", None),
    ("glue-string-value", "glue", {"ns1.tm.example.": "127.0.0.1"}),
    ("glue-not-a-name-server", "glue", {"ns9.tm.example.": ["127.0.0.1"]}),
    ("colour-unknown", "colour", "red"),
]
GLUE_FIELDS: list[tuple[Any, ...]] = [
    ("in-zone-ns-no-glue-key", "glue", NO_BODY),  # once answered 422, yet committed
    ("in-zone-ns-empty-glue", "glue", []),
    ("glue-bad-ip", "glue", ["999.1.1.1"]),
    ("glue-scoped-ipv6", "glue", ["fe80::1%eth0"]),
]


def glued(glue: Any) -> dict[str, Any]:
    body = in_zone_ns()
    return body if glue is NO_BODY else body | {"glue": {body["ns"][0]: glue}}


OTHER = "/zones/other.example."
ZONE_CASES = [
    *typed("zone.post", "POST", ZONES, new_zone, ZONE_FIELDS),
    *typed("zone.post", "POST", ZONES, glued, GLUE_FIELDS),
    *rows(
        "zone.post",
        "POST",
        ZONES,
        [
            ("duplicate", ZONE, "name", 409),
            ("duplicate-case", ZONE | {"name": "TM.Example"}, "name", 409),
        ],
    ),
    *rows(
        "zone.patch",
        "PATCH",
        TM,
        [
            ("rename", {"name": "renamed.example."}, "name"),
            ("ns-empty", {"ns": []}, "ns"),
            ("ns-in-zone-no-glue", {"ns": ["ns2.tm.example."]}, "glue"),
            ("negative_ttl-string", {"negative_ttl": "60"}, "negative_ttl"),
            ("negative_ttl-above", {"negative_ttl": 604801}, "negative_ttl"),
            (
                "glue-scoped-ipv6",
                {"glue": {"ns1.tm.example.": ["fe80::1%eth0"]}},
                "glue",
            ),
            ("soa_email-bad", {"soa_email": "nope"}, "soa_email"),
            ("colour-unknown", {"colour": "red"}, "colour"),
        ],
    ),
    Case("zone.patch.glue-null", "PATCH", OTHER, {"glue": None}, "glue"),
]

# Profiles -----------------------------------------------------------------

PROFILE_FIELDS: list[tuple[Any, ...]] = [
    ("name-int", "name", 5),
    ("name-null", "name", None),
    ("name-empty", "name", ""),
    ("name-outside-zone", "name", "x.big.test."),
    ("name-star", "name", "*"),
    ("name-full-over-255", "name", LONG_RELATIVE),
    ("name-control", "name", "a\x00b"),
    ("name-empty-label", "name", "bad..name"),
    ("name-label-64", "name", "a" * 64),
    ("name-space", "name", "a b"),
    ("name-collides-endpoint", "name", "a.prio"),
    ("name-collides-glue", "name", "ns1"),
    ("method-int", "method", 1),
    ("method-bogus", "method", "fastest"),
    ("method-null", "method", None),
    ("ttl-string", "ttl", "60"),
    ("ttl-bool", "ttl", True),
    ("ttl-float", "ttl", 1.5),
    ("ttl-null", "ttl", None),
    ("ttl-below", "ttl", -1),
    ("ttl-above", "ttl", 604801),
    ("enabled-string", "enabled", "yes"),
    ("enabled-int", "enabled", 1),
    ("enabled-null", "enabled", None),
    ("monitor-list", "monitor", []),
    ("monitor-string", "monitor", "tcp"),
    ("srv-object", "srv", {}),
    ("srv-string", "srv", "_sip._udp"),
    ("on_stale-bogus", "on_stale", "sometimes"),
    ("min_available-zero", "min_available", 0),
    ("min_available-bool", "min_available", True),
    ("min_available-float", "min_available", 1.5),
    ("min_available-no-share", "min_available", "0%"),
    ("min_available-over-all", "min_available", "101%"),
    ("min_available-words", "min_available", "half"),
    ("ttl_degraded-string", "ttl_degraded", "30"),
    ("ttl_degraded-below", "ttl_degraded", -1),
    ("ttl_degraded-above-ttl", "ttl_degraded", 61),
    ("max_return-string", "max_return", "2"),
    ("max_return-bool", "max_return", True),
    ("max_return-float", "max_return", 2.5),
    ("max_return-below", "max_return", 0),
    ("max_return-above", "max_return", 11),
    ("failback-int", "failback", 1),
    ("failback-bogus", "failback", "sometimes"),
    ("all_down-bool", "all_down", True),
    ("all_down-bogus", "all_down", "panic"),
    ("fallback-int", "fallback", 3221225985),
    ("fallback-list", "fallback", ["192.0.2.1"]),
    ("fallback-bogus", "fallback", "nope"),
    ("geo_failover-string", "geo_failover", "no"),
    ("geo_failover-int", "geo_failover", 0),
    ("endpoints-object", "endpoints", {}),
    ("endpoints-string", "endpoints", "a"),
    ("endpoints-null", "endpoints", None),
    ("endpoints-1001", "endpoints", many_endpoints(1001)),
    ("colour-unknown", "colour", "red"),
]


def srv(service: Any = "_sip._udp", port: Any = 5060, **more: Any) -> dict[str, Any]:
    return new_profile(srv=[{"service": service, "port": port, **more}])


SRV_CASES = [
    Case(f"profile.post.srv-{suffix}", "POST", PROFILES, body, field)
    for suffix, body, field in [
        ("service-no-underscore", srv("sip._udp"), "srv.0.service"),
        ("service-one-label", srv("_sip"), "srv.0.service"),
        ("service-three-labels", srv("_sip._udp._x"), "srv.0.service"),
        ("service-bad-char", srv("_s!p._udp"), "srv.0.service"),
        ("service-int", srv(5), "srv.0.service"),
        ("port-string", srv(port="5060"), "srv.0.port"),
        ("port-below", srv(port=0), "srv.0.port"),
        ("port-above", srv(port=65536), "srv.0.port"),
        ("port-missing", new_profile(srv=[{"service": "_sip._udp"}]), "srv.0.port"),
        ("unknown-field", srv(weight=1), "srv.0.weight"),
        ("item-string", new_profile(srv=["_sip._udp"]), "srv.0"),
    ]
]
E1, E2 = _address("e1", "192.0.2.201"), _address("e2", "192.0.2.202")
APEX_HOST = {"name": "h", "kind": "host", "target": "svc.example.net."}
SCOPED_FALLBACK = {"all_down": "fallback", "fallback": "fe80::1%eth0"}
PROFILE_CASES = [
    *typed("profile.post", "POST", PROFILES, new_profile, PROFILE_FIELDS),
    *SRV_CASES,
    *rows(
        "profile.post",
        "POST",
        PROFILES,
        [
            (
                "endpoint-fqdn-over-255",
                new_profile(name=LONG_PROFILE, endpoints=[_address(LABEL63, "::1")]),
                ("endpoints.0.name", "name"),
            ),
            (
                "duplicate-endpoint-names",
                new_profile(endpoints=[E1, E2 | {"name": "e1"}]),
                "endpoints.1.name",
            ),
            (
                "duplicate-priorities",
                new_profile(endpoints=[E1 | {"priority": 5}, E2 | {"priority": 5}]),
                "endpoints.1.priority",
            ),
            (
                "duplicate-geo",
                new_profile(
                    method="geographic",
                    endpoints=[E1 | {"geo": ["FR"]}, E2 | {"geo": ["FR"]}],
                ),
                "endpoints.1.geo",
            ),
            (
                "overlapping-subnets",
                new_profile(
                    method="subnet",
                    endpoints=[
                        E1 | {"subnets": ["10.0.0.0/8"]},
                        E2 | {"subnets": ["10.1.0.0/16"]},
                    ],
                ),
                "endpoints.1.subnets.0",
            ),
            (
                "all_down-fallback-no-address",
                new_profile(all_down="fallback"),
                "fallback",
            ),
            ("fallback-scoped-ipv6", new_profile(**SCOPED_FALLBACK), "fallback"),
            (
                "apex-host-endpoint",
                new_profile(name="@", method="weighted", endpoints=[APEX_HOST]),
                "endpoints.0.kind",
            ),
            # An endpoint's fields inside a profile body are named by their path.
            (
                "endpoint-priority-bool",
                new_profile(endpoints=[E1 | {"priority": True}]),
                "endpoints.0.priority",
            ),
            (
                "endpoint-weight-string",
                new_profile(endpoints=[E1 | {"weight": "3"}]),
                "endpoints.0.weight",
            ),
            (
                "endpoint-address-scoped-ipv6",
                new_profile(endpoints=[E1 | {"address": "fe80::1%eth0"}]),
                "endpoints.0.address",
            ),
            (
                "endpoint-address-missing",
                new_profile(endpoints=[{"name": "e1"}]),
                "endpoints.0.address",
            ),
            ("duplicate", new_profile(name="prio"), "name", 409),
            ("duplicate-absolute", new_profile(name="prio.tm.example."), "name", 409),
            ("duplicate-case", new_profile(name="PRIO"), "name", 409),
        ],
    ),
    *rows(
        "profile.patch",
        "PATCH",
        prof("prio"),
        [
            ("ttl-string", {"ttl": "60"}, "ttl"),
            ("ttl-bool", {"ttl": True}, "ttl"),
            ("method-null", {"method": None}, "method"),
            ("name-null", {"name": None}, "name"),
            ("endpoints-1001", {"endpoints": many_endpoints(1001)}, "endpoints"),
            ("fallback-scoped-ipv6", SCOPED_FALLBACK, "fallback"),
            ("colour-unknown", {"colour": "red"}, "colour"),
            (
                "if-match-stale",
                {"ttl": 30},
                "If-Match",
                412,
                "application/json",
                (("If-Match", '"stale"'),),
            ),
        ],
    ),
    # Each on a profile of its own: one wrongly accepted does not alter another.
    Case(
        "profile.patch.name-outside-zone",
        "PATCH",
        prof("spare1"),
        {"name": "y.big.test."},
        "name",
    ),
    Case("profile.patch.name-star", "PATCH", prof("spare2"), {"name": "*.w"}, "name"),
    Case(
        "profile.patch.all_down-fallback-no-address",
        "PATCH",
        prof("perf"),
        {"all_down": "fallback"},
        "fallback",
    ),
    Case(
        "profile.patch.duplicate-priorities",
        "PATCH",
        prof("geo"),
        {"endpoints": [E1 | {"priority": 1}, E2 | {"priority": 1}]},
        "endpoints.1.priority",
    ),
    Case(
        "profile.patch.multivalue-with-host",
        "PATCH",
        prof("weighted"),
        {"method": "multivalue"},
        "endpoints.2.kind",
    ),
]

# Monitors (the profile's; an endpoint's at the end) -----------------------

MONITOR_FIELDS: list[tuple[Any, ...]] = [
    ("protocol-int", "protocol", 5),
    ("protocol-bogus", "protocol", "icmp"),
    ("protocol-null", "protocol", None),
    ("port-string", "port", "80"),
    ("port-bool", "port", True),
    ("port-below", "port", 0),
    ("port-above", "port", 65536),
    ("path-int", "path", 5),
    ("path-relative", "path", "ok"),
    ("path-crlf", "path", "/ok\r\nX-Injected: 1"),
    ("path-too-long", "path", "/" + "a" * 1024),
    ("host-int", "host", 5),
    ("host-crlf", "host", "a.example\r\nX-Injected: 1"),
    ("host-too-long", "host", "a" * 256),
    ("headers-list", "headers", ["X-A: b"]),
    ("headers-value-int", "headers", {"X-A": 5}),
    ("headers-name-crlf", "headers", {"X-A\r\nX-B": "v"}),
    ("headers-value-crlf", "headers", {"X-A": "v\r\nX-Injected: 1"}),
    ("headers-9", "headers", {f"X-{i}": "v" for i in range(9)}),
    ("expected_status-int", "expected_status", 200),
    ("expected_status-bad", "expected_status", "99"),
    ("expected_status-open-range", "expected_status", "200-"),
    ("interval-string", "interval", "30"),
    ("interval-bool", "interval", True),
    ("interval-null", "interval", None),
    ("interval-below", "interval", 0.99),
    ("interval-above", "interval", 3601),
    ("timeout-string", "timeout", "1"),
    ("timeout-zero", "timeout", 0),
    ("timeout-negative", "timeout", -1),
    ("tolerated_failures-string", "tolerated_failures", "3"),
    ("tolerated_failures-float", "tolerated_failures", 1.5),
    ("tolerated_failures-bool", "tolerated_failures", True),
    ("tolerated_failures-below", "tolerated_failures", -1),
    ("tolerated_failures-above", "tolerated_failures", 10),
    ("successes_to_online-string", "successes_to_online", "1"),
    ("successes_to_online-below", "successes_to_online", 0),
    ("successes_to_online-above", "successes_to_online", 11),
    ("method-bogus", "method", "FETCH"),
    ("verify_tls-string", "verify_tls", "yes"),
    ("sip_success-int", "sip_success", 1),
    ("address-bogus", "address", "nope"),
    ("address-scoped-ipv6", "address", "fe80::1%eth0"),
    ("checks-string", "checks", "tcp"),
    ("checks-too-many", "checks", [{"protocol": "tcp"}] * 5),
    ("checks-schedule", "checks", [{"protocol": "tcp", "interval": 5}]),
    ("checks-none", "checks", [{"protocol": "none"}]),
    ("checks-nested", "checks", [{"protocol": "tcp", "checks": []}]),
    ("require-bogus", "require", "most"),
    ("require-zero", "require", 0),
    ("require-above-checks", "require", 3),
    ("invert-string", "invert", "yes"),
    ("quorum-bogus", "quorum", "most"),
    ("quorum-int", "quorum", 2),
    ("body_contains-empty", "body_contains", ""),
    ("body_contains-int", "body_contains", 7),
    ("body_contains-crlf", "body_contains", "ok\r\nX: y"),
    ("body_contains-long", "body_contains", "h" * 256),
    ("body_contains-on-none", "body_contains", "healthy"),
    ("colour-unknown", "colour", "red"),
]
MONITOR_CASES = [
    Case(
        f"monitor.post.{suffix}",
        "POST",
        PROFILES,
        with_monitor(**{k: v}),
        f"monitor.{k}",
    )
    for suffix, k, v in MONITOR_FIELDS
]
MONITOR_CASES += [
    Case(
        "monitor.post.timeout-equals-interval",
        "POST",
        PROFILES,
        with_monitor(interval=10, timeout=10),
        "monitor",
    ),
    Case(
        "monitor.post.timeout-above-interval",
        "POST",
        PROFILES,
        with_monitor(interval=10, timeout=20),
        "monitor",
    ),
    Case(
        "monitor.post.body_contains-with-head",
        "POST",
        PROFILES,
        with_monitor(protocol="http", method="HEAD", body_contains="healthy"),
        "monitor.body_contains",
    ),
    *rows(
        "monitor.patch",
        "PATCH",
        prof("prio"),
        [
            ("host-crlf", {"monitor": {"host": "a\r\nb"}}, "monitor.host"),
            (
                "header-name-crlf",
                {"monitor": {"headers": {"X-A\r\nB": "v"}}},
                "monitor.headers",
            ),
            (
                "header-value-crlf",
                {"monitor": {"headers": {"X-A": "v\r\nB: c"}}},
                "monitor.headers",
            ),
            ("path-crlf", {"monitor": {"path": "/x\r\nB: c"}}, "monitor.path"),
        ],
    ),
    Case(
        "monitor.endpoint-patch.host-crlf",
        "PATCH",
        EP_A,
        {"monitor": NONE | {"host": "a\r\nb"}},
        "monitor.host",
    ),
    Case(
        "monitor.endpoint-post.interval-above",
        "POST",
        eps("prio"),
        new_endpoint(monitor=NONE | {"interval": 3601}),
        "monitor.interval",
    ),
]

# Endpoints ----------------------------------------------------------------

ENDPOINT_FIELDS: list[tuple[Any, ...]] = [
    ("name-int", "name", 5),
    ("name-null", "name", None),
    ("name-empty", "name", ""),
    ("name-bad", "name", "Bad Name!"),
    ("name-label-64", "name", "a" * 64),
    ("name-leading-hyphen", "name", "-x"),
    ("name-control", "name", "a\x00b"),
    ("name-dotted", "name", "a.b"),
    ("kind-int", "kind", 1),
    ("kind-bogus", "kind", "cname"),
    ("address-int", "address", 3221225985),
    ("address-list", "address", ["192.0.2.9"]),
    ("address-bad", "address", "192.0.2.300"),
    ("address-network", "address", "192.0.2.0/24"),
    ("address-scoped-ipv6", "address", "fe80::1%eth0"),
    ("address-null", "address", None),
    ("enabled-string", "enabled", "true"),
    ("enabled-int", "enabled", 1),
    ("priority-string", "priority", "7"),
    ("priority-float", "priority", 1.5),
    ("priority-below", "priority", 0),
    ("priority-above", "priority", 1001),
    ("priority-taken", "priority", 1),
    ("weight-string", "weight", "3"),
    ("weight-bool", "weight", True),
    ("weight-float", "weight", 2.5),
    ("weight-null", "weight", None),
    ("weight-below", "weight", -1),
    ("weight-above", "weight", 1001),
    ("geo-string", "geo", "US"),
    ("subnets-string", "subnets", "198.51.100.0/24"),
    ("location-list", "location", [53.3, -6.3]),
    ("port-string", "port", "5060"),
    ("port-bool", "port", True),
    ("port-below", "port", 0),
    ("port-above", "port", 65536),
    ("always_serve-string", "always_serve", "yes"),
    ("monitor-string", "monitor", "tcp"),
    ("monitor-list", "monitor", []),
    ("override-string", "override", "down"),
    ("override-state-bogus", "override", {"state": "sideways"}),
    ("override-state-missing", "override", {"reason": "x"}),
    ("override-reason-int", "override", {"state": "down", "reason": 5}),
    ("override-reason-501", "override", {"state": "down", "reason": "x" * 501}),
    ("override-until-string", "override", {"state": "down", "until": "tomorrow"}),
    (
        "override-until-past",
        "override",
        {"state": "down", "until": 1000},
        "override.until",
    ),
    ("override-unknown-field", "override", {"state": "down", "x": 1}, "override.x"),
    ("colour-unknown", "colour", "red"),
]
GEO_FIELDS: list[tuple[Any, ...]] = [
    ("geo-int-item", "geo", [1], "geo.0"),
    ("geo-unknown-country", "geo", ["XX"], "geo.0"),
    ("geo-unknown-continent", "geo", ["GEO-XX"], "geo.0"),
    ("geo-unknown-subdivision", "geo", ["US-ZZ"], "geo.0"),
    ("geo-empty-code", "geo", [""], "geo.0"),
    ("geo-taken", "geo", ["GEO-EU"]),
]
SUBNET_FIELDS: list[tuple[Any, ...]] = [
    ("subnets-bad", "subnets", ["nope"], "subnets.0"),
    ("subnets-prefix-33", "subnets", ["198.51.100.0/33"], "subnets.0"),
    ("subnets-host-bits", "subnets", ["198.51.100.1/24"], "subnets.0"),
    ("subnets-reversed-range", "subnets", ["10.0.0.9-10.0.0.1"], "subnets.0"),
    ("subnets-overlap", "subnets", ["198.51.100.128/25"], "subnets.0"),
    ("subnets-overlap-range", "subnets", ["203.0.113.10-203.0.113.20"], "subnets.0"),
]
LOCATION_FIELDS: list[tuple[Any, ...]] = [
    ("location-lat-string", "location", {"lat": "53", "lon": -6}, "location.lat"),
    ("location-lat-above", "location", {"lat": 91, "lon": 0}, "location.lat"),
    ("location-lon-below", "location", {"lat": 0, "lon": -181}, "location.lon"),
    ("location-empty", "location", {}),
    ("location-region-unknown", "location", "nope:x"),
    ("location-region-int", "location", {"region": 5}, "location.region"),
    ("location-unknown-field", "location", {"lat": 0, "lon": 0, "x": 1}, "location.x"),
]
NESTED_FIELDS: list[tuple[Any, ...]] = [
    ("child-int", "child", 5),
    ("child-self", "child", "outer"),
    ("child-unknown", "child", "nope"),
    ("child-other-zone", "child", "www.other.example."),
    ("child-null", "child", None),
    ("min_child_endpoints-string", "min_child_endpoints", "1"),
    ("min_child_endpoints-below", "min_child_endpoints", 0),
    ("min_child_endpoints-above", "min_child_endpoints", 1001),
    ("always_serve", "always_serve", True),
]
HOST_FIELDS: list[tuple[Any, ...]] = [
    ("target-int", "target", 5),
    ("target-bad", "target", "bad..name.example."),
    ("target-control", "target", "svc\x00.example.net."),
    ("target-null", "target", None),
]


def nested(**over: Any) -> dict[str, Any]:
    return {"name": fresh(), "kind": "nested", "child": "weighted"} | over


def host(**over: Any) -> dict[str, Any]:
    return {"name": fresh(), "kind": "host", "target": "svc.example.net."} | over


# Each kind needs its own field; nesting and multivalue have rules of their own.
KIND_RULES: list[tuple[Any, ...]] = [
    ("address-missing", "prio", {"name": fresh()}, "address"),
    (
        "address-kind-missing",
        "prio",
        {"name": fresh(), "kind": "address"},
        "address",
    ),
    (
        "host-without-target",
        "weighted",
        {"name": fresh(), "kind": "host"},
        "target",
    ),
    (
        "nested-without-child",
        "outer",
        {"name": fresh(), "kind": "nested"},
        "child",
    ),
    ("nesting-cycle", "prio", nested(child="outer"), "child"),
    ("multivalue-host", "multi", host(), "kind"),
    ("multivalue-nested", "multi", nested(), "kind"),
    ("duplicate", "prio", new_endpoint(name="a"), "name", 409),
    ("duplicate-case", "prio", new_endpoint(name="A"), "name", 409),
]
ENDPOINT_CASES = [
    *typed("endpoint.post", "POST", eps("prio"), new_endpoint, ENDPOINT_FIELDS),
    *typed("endpoint.post", "POST", eps("geo"), new_endpoint, GEO_FIELDS),
    *typed("endpoint.post", "POST", eps("subnet"), new_endpoint, SUBNET_FIELDS),
    *typed("endpoint.post", "POST", eps("perf"), new_endpoint, LOCATION_FIELDS),
    *typed("endpoint.post.nested", "POST", eps("outer"), nested, NESTED_FIELDS),
    *typed("endpoint.post.host", "POST", eps("weighted"), host, HOST_FIELDS),
    *[
        Case(f"endpoint.post.{suffix}", "POST", eps(profile), body, field, *status)
        for suffix, profile, body, field, *status in KIND_RULES
    ],
    *rows(
        "endpoint.patch",
        "PATCH",
        EP_A,
        [
            ("weight-string", {"weight": "3"}, "weight"),
            ("weight-bool", {"weight": True}, "weight"),
            ("priority-taken", {"priority": 2}, "priority"),
            ("address-null", {"address": None}, "address"),
            ("name-null", {"name": None}, "name"),
            ("rename-taken", {"name": "b"}, "name", (409, 422)),
            ("nested-without-child", {"kind": "nested"}, "child"),
            (
                "override-until-past",
                {"override": {"state": "down", "until": 1}},
                "override.until",
            ),
            ("colour-unknown", {"colour": "red"}, "colour"),
        ],
    ),
    # On another endpoint: accepted today, it would spoil the cases above.
    Case(
        "endpoint.patch.address-scoped-ipv6",
        "PATCH",
        eps("prio") + "/c",
        {"address": "fe80::1%eth0"},
        "address",
    ),
]

# Latency ------------------------------------------------------------------


def latency(network: str = "192.0.2.0/24", rtt: Any = None, **more: Any) -> Any:
    entry = {"network": network, "rtt": {"aws:eu-west-1": 5} if rtt is None else rtt}
    return {"entries": [entry | more]}


LATENCY_CASES = rows(
    "latency.put",
    "PUT",
    LATENCY_PATH,
    [
        ("region-unknown", latency(rtt={"nope:x": 5}), "entries.0.rtt"),
        ("rtt-negative", latency(rtt={"aws:eu-west-1": -1}), "entries.0.rtt"),
        ("rtt-string", latency(rtt={"aws:eu-west-1": "5"}), "entries.0.rtt"),
        ("rtt-bool", latency(rtt={"aws:eu-west-1": True}), "entries.0.rtt"),
        ("rtt-empty", latency(rtt={}), "entries.0.rtt"),
        ("network-bad", latency("nope"), "entries.0.network"),
        ("network-host-bits", latency("192.0.2.1/24"), "entries.0.network"),
        ("entry-unknown-field", latency(colour=1), "entries.0.colour"),
        ("network-twice", {"entries": latency()["entries"] * 2}, "entries"),
        ("entries-missing", {}, "entries"),
        ("entries-object", {"entries": {}}, "entries"),
        ("colour-unknown", {"entries": [], "colour": 1}, "colour"),
        # Found by schemathesis: an empty location name.
        ("region-empty", latency(rtt={"": 1.0}), "entries.0.rtt"),
    ],
)

# Unknown resources and methods (a 404 names the missing one in its message) -

NOPE = "/zones/nope.example."
NOT_FOUND_CASES = [
    Case(f"404.{suffix}", method, path, body, named, 404)
    for suffix, method, path, body, named in [
        ("zone.get", "GET", NOPE, NO_BODY, "nope.example"),
        ("zone.patch", "PATCH", NOPE, {"negative_ttl": 30}, "nope.example"),
        ("zone.delete", "DELETE", NOPE, NO_BODY, "nope.example"),
        ("zone.bad-name", "GET", "/zones/bad..name", NO_BODY, "bad..name"),
        ("zone.profiles", "GET", NOPE + "/profiles", NO_BODY, "nope.example"),
        (
            "zone.profile-post",
            "POST",
            NOPE + "/profiles",
            new_profile(),
            "nope.example",
        ),
        ("profile.get", "GET", prof("nope"), NO_BODY, "nope"),
        ("profile.patch", "PATCH", prof("nope"), {"ttl": 30}, "nope"),
        ("profile.delete", "DELETE", prof("nope"), NO_BODY, "nope"),
        ("profile.health", "GET", prof("nope") + "/health", NO_BODY, "nope"),
        ("profile.other-zone", "GET", OTHER + "/profiles/prio", NO_BODY, "prio"),
        ("endpoints.list", "GET", eps("nope"), NO_BODY, "nope"),
        ("endpoint.post", "POST", eps("nope"), new_endpoint(), "nope"),
        ("endpoint.get", "GET", eps("prio") + "/nope", NO_BODY, "nope"),
        ("endpoint.patch", "PATCH", eps("prio") + "/nope", {"weight": 2}, "nope"),
        ("endpoint.delete", "DELETE", eps("prio") + "/nope", NO_BODY, "nope"),
        ("route", "GET", "/nothing-here", NO_BODY, None),
    ]
]
NOT_ALLOWED_CASES = [
    Case(f"405.{method.lower()}.{label}", method, path, status=405)
    for method, path, label in [
        ("PUT", ZONES, "zones"),
        ("DELETE", ZONES, "zones"),
        ("POST", TM, "zone"),
        ("PUT", TM, "zone"),
        ("POST", prof("prio"), "profile"),
        ("PUT", prof("prio"), "profile"),
        ("PUT", eps("prio"), "endpoints"),
        ("POST", EP_A, "endpoint"),
        ("PUT", EP_A, "endpoint"),
        ("POST", prof("prio") + "/health", "health"),
        ("POST", "/explain", "explain"),
        ("DELETE", LATENCY_PATH, "latency"),
        ("POST", "/audit", "audit"),
        ("PATCH", "/openapi.json", "openapi"),
    ]
]

# Query parameters ---------------------------------------------------------

EXPLAIN = "/explain?name=prio.tm.example.&client=192.0.2.99"
LIST = eps("prio")
QUERY_CASES = [
    Case(f"query.{suffix}", "GET", path, field=named)
    for suffix, path, named in [
        ("audit.unknown", "/audit?colour=red", "colour"),
        ("audit.limit-zero", "/audit?limit=0", "limit"),
        ("audit.limit-above", "/audit?limit=1001", "limit"),
        ("audit.limit-text", "/audit?limit=ten", "limit"),
        ("audit.since-bad", "/audit?since=yesterday", "since"),
        ("audit.until-bad", "/audit?until=2026-13-45T00:00:00Z", "until"),
        # Found by schemathesis: seconds instead of ISO 8601, an empty client.
        ("audit.until-seconds", "/audit?until=0.5", "until"),
        ("explain.client-empty", "/explain?name=prio.tm.example.&client=", "client"),
        ("audit.resource-long", "/audit?resource=" + "x" * 256, "resource"),
        ("audit.actor-long", "/audit?actor=" + "x" * 256, "actor"),
        ("endpoints.unknown", LIST + "?colour=red", "colour"),
        ("endpoints.limit-zero", LIST + "?limit=0", "limit"),
        ("endpoints.limit-above", LIST + "?limit=1001", "limit"),
        ("endpoints.limit-text", LIST + "?limit=abc", "limit"),
        ("endpoints.offset-negative", LIST + "?offset=-1", "offset"),
        ("endpoints.offset-float", LIST + "?offset=1.5", "offset"),
        ("endpoints.state-bogus", LIST + "?state=bogus", "state"),
        ("endpoints.enabled-maybe", LIST + "?enabled=maybe", "enabled"),
        ("explain.no-name", "/explain", "name"),
        ("explain.empty-name", "/explain?name=", "name"),
        ("explain.bad-name", "/explain?name=a..b", "name"),
        ("explain.bad-type", EXPLAIN + "&type=BOGUS", "type"),
        (
            "explain.client-not-ip",
            "/explain?name=prio.tm.example.&client=nope",
            "client",
        ),
        (
            "explain.client-scoped",
            "/explain?name=tm.example.&client=fe80::1%25eth0",
            "client",
        ),
        ("explain.prefix-33", EXPLAIN + "&prefix=33", "prefix"),
        ("explain.prefix-negative", EXPLAIN + "&prefix=-1", "prefix"),
        ("explain.prefix-text", EXPLAIN + "&prefix=abc", "prefix"),
        (
            "explain.prefix-129-v6",
            "/explain?name=tm.example.&client=::2&prefix=129",
            "prefix",
        ),
        ("explain.unknown", EXPLAIN + "&colour=red", "colour"),
    ]
]

# Bodies that are not JSON objects, or not JSON at all ---------------------

NAN_UNTIL = b'{"override": {"state": "down", "until": NaN}}'
INFINITE_UNTIL = b'{"override": {"state": "down", "until": Infinity}}'
NAN_LATITUDE = b'{"name": "f", "address": "::1", "location": {"lat": NaN, "lon": 0}}'
NAN_RTT = b'{"entries": [{"network": "192.0.2.0/24", "rtt": {"aws:eu-west-1": NaN}}]}'
BODIES: list[tuple[Any, ...]] = [
    ("malformed", "POST", ZONES, b"{nope", 400),
    ("truncated", "POST", PROFILES, b'{"name": "x"', 400),
    ("trailing-garbage", "POST", ZONES, b'{"name": "x"} extra', 400),
    ("not-utf8", "POST", ZONES, b'{"name": "\xff"}', 400),
    ("deep-array", "POST", ZONES, deep(b"[", b"]"), 400),
    ("deep-object", "PATCH", prof("prio"), deep(b'{"a":', b"}"), 400),
    ("deep-unclosed", "POST", eps("prio"), b"[" * 100_000, 400),
    # NaN and Infinity are not JSON (RFC 8259): 400, or 422 on the field.
    ("nan-until", "PATCH", eps("prio") + "/b", NAN_UNTIL, (400, 422)),
    ("infinity-until", "PATCH", EP_A, INFINITE_UNTIL, (400, 422)),
    (
        "nan-interval",
        "PATCH",
        prof("prio"),
        b'{"monitor": {"interval": NaN}}',
        (400, 422),
    ),
    ("nan-latitude", "POST", eps("perf"), NAN_LATITUDE, (400, 422)),
    ("nan-rtt", "PUT", LATENCY_PATH, NAN_RTT, (400, 422)),
    ("zone-list", "POST", ZONES, [ZONE], 400),
    ("zone-string", "POST", ZONES, "tm.example.", 400),
    ("zone-number", "POST", ZONES, 5, 400),
    ("zone-null", "POST", ZONES, b"null", 400),
    ("profile-patch-list", "PATCH", prof("prio"), [], 400),
    ("endpoint-post-list", "POST", eps("prio"), [new_endpoint()], 400),
    ("latency-list", "PUT", LATENCY_PATH, [], 400),
    ("empty-zone-post", "POST", ZONES, b"", (400, 422)),
    ("empty-profile-post", "POST", PROFILES, b"", (400, 422)),
    ("empty-endpoint-post", "POST", eps("prio"), b"", (400, 422)),
    ("empty-profile-patch", "PATCH", prof("prio"), b"", (400, 422)),
    ("empty-latency-put", "PUT", LATENCY_PATH, b"", (400, 422)),
]
BODY_CASES = [
    Case(f"body.{suffix}", method, path, body, None, status)
    for suffix, method, path, body, status in BODIES
]
BODY_CASES.append(
    Case("body.none-no-type", "POST", ZONES, status=(400, 422), content_type=None)
)
JSON_ZONE = b'{"name": "ct.example.", "ns": ["ns1.tm.example."]}'
CONTENT_TYPE_CASES = [
    Case(f"content-type.{suffix}", method, path, data, "Content-Type", 415, ctype)
    for suffix, method, path, data, ctype in [
        ("text-plain", "POST", ZONES, JSON_ZONE, "text/plain"),
        (
            "form",
            "POST",
            ZONES,
            b"name=ct.example.",
            "application/x-www-form-urlencoded",
        ),
        ("multipart", "POST", ZONES, b"--x--", "multipart/form-data; boundary=x"),
        ("xml", "POST", PROFILES, b"<profile/>", "application/xml"),
        ("text-patch", "PATCH", prof("prio"), b'{"ttl": 30}', "text/plain"),
        ("html-endpoint", "POST", eps("prio"), b"{}", "text/html"),
        ("yaml-latency", "PUT", LATENCY_PATH, b"entries: []", "application/yaml"),
    ]
]
LAST_CASES = [
    # A child in use cannot go; last, so that a wrong "yes" spoils no other case.
    Case("profile.delete.nested-child", "DELETE", prof("prio"), status=(409, 422)),
    # Failed logins slow down later requests from the same address.
    Case("auth.no-token", "POST", ZONES, new_zone(), "Authorization", 401, token=None),
    Case(
        "auth.wrong-token",
        "PATCH",
        TM,
        {"negative_ttl": 9},
        "Authorization",
        401,
        token="x",
    ),
]
CASES: list[Case] = [
    *ZONE_CASES,
    *PROFILE_CASES,
    *MONITOR_CASES,
    *ENDPOINT_CASES,
    *LATENCY_CASES,
    *NOT_FOUND_CASES,
    *NOT_ALLOWED_CASES,
    *QUERY_CASES,
    *BODY_CASES,
    *CONTENT_TYPE_CASES,
    *LAST_CASES,
]
