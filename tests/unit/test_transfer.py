"""Configuration as code: export, load (with positions), plan and describe."""

from __future__ import annotations

import json
from dataclasses import replace
from ipaddress import ip_address

import pytest

from app import transfer
from app.domain.model import (
    AllDown,
    ChangeAction,
    ChangeKind,
    Config,
    Endpoint,
    EndpointKind,
    Failback,
    HttpMethod,
    Location,
    Method,
    MinAvailable,
    Monitor,
    MonitorProtocol,
    Override,
    OverrideState,
    Profile,
    Quorum,
    SrvService,
    Zone,
)
from app.transfer import Change, TransferError, describe, dump, export_document, load

ZONE = "tm.example."


def ep(name: str, address: str | None = None, **over: object) -> Endpoint:
    parsed = ip_address(address) if address else None
    return replace(Endpoint(name=name, address=parsed), **over)  # type: ignore[arg-type]


def stored(config: Config) -> Config:
    """The configuration as the store returns it: every object has an id."""
    ids = iter(range(100, 10_000))
    zones = tuple(
        replace(
            z,
            id=next(ids),
            profiles=tuple(
                replace(
                    p,
                    id=next(ids),
                    endpoints=tuple(replace(e, id=next(ids)) for e in p.endpoints),
                )
                for p in z.profiles
            ),
        )
        for z in config.zones
    )
    return replace(config, zones=zones, parked={101: 102})


def sample() -> Config:
    """Every feature a document carries, in a stored-looking configuration."""
    https = Monitor(
        protocol=MonitorProtocol.HTTPS,
        path="/healthz",
        host="www.example.com",
        headers=(("X-Probe", "tmdns"),),
        expected_status="200-299,301",
        interval=10.0,
        timeout=5.0,
        tolerated_failures=2,
        method=HttpMethod.HEAD,
    )
    app = Profile(
        name="app",
        method=Method.PRIORITY,
        ttl=30,
        monitor=https,
        failback=Failback.PARKING,
        srv=(SrvService("_sip._udp", 5060),),
        endpoints=(
            ep("primary", "192.0.2.10", priority=1),
            ep(
                "secondary",
                "198.51.100.20",
                priority=2,
                port=5080,
                monitor=Monitor(protocol=MonitorProtocol.TCP, port=5080),
                override=Override(OverrideState.DRAIN, "patching", 1_900_000_000.0),
            ),
        ),
    )
    web = Profile(
        name="web",
        method=Method.WEIGHTED,
        all_down=AllDown.FALLBACK,
        fallback=ip_address("192.0.2.99"),
        endpoints=(
            ep("a", "192.0.2.11", priority=5, weight=3),
            ep("b", "2001:db8::11", priority=9, weight=1, enabled=False),
            ep("cdn", kind=EndpointKind.HOST, target="edge.cdn.example.", priority=7),
        ),
    )
    eu = Profile(
        name="eu.perf",
        method=Method.PERFORMANCE,
        endpoints=(
            ep(
                "ams",
                "192.0.2.30",
                priority=1,
                location=Location(52.4, 4.9, "azure:westeurope"),
            ),
            ep("lab", "192.0.2.31", priority=2, location=Location(48.1, 11.6)),
        ),
    )
    parent = Profile(
        name="global",
        method=Method.GEOGRAPHIC,
        geo_failover=True,
        endpoints=(
            ep(
                "europe",
                kind=EndpointKind.NESTED,
                child="eu.perf",
                min_child_endpoints=2,
                priority=1,
                geo=("GEO-EU", "WORLD"),
            ),
            ep("california", "192.0.2.40", priority=2, geo=("US-CA",)),
        ),
    )
    apex = Profile(
        name="@",
        method=Method.SUBNET,
        endpoints=(
            ep("office", "192.0.2.50", priority=1, subnets=("10.0.0.0/8",)),
            ep("others", "192.0.2.51", priority=2, always_serve=True),
        ),
    )
    main = Zone(
        name=ZONE,
        ns=("ns1.tm.example.", "ns.elsewhere.example."),
        soa_email="dns-admin@example.com",
        negative_ttl=30,
        glue=(
            ("ns1.tm.example.", ip_address("2001:db8::53")),
            ("ns1.tm.example.", ip_address("192.0.2.53")),
        ),
        profiles=(web, app, parent, eu, apex),
    )
    other = Zone(
        name="other.example.",
        ns=("ns1.example.net.",),
        soa_email="hostmaster@other.example",
        profiles=(
            Profile(
                name="mv",
                method=Method.MULTIVALUE,
                max_return=3,
                monitor=Monitor(protocol=MonitorProtocol.NONE),
                endpoints=(
                    ep("m1", "192.0.2.61", priority=1),
                    ep("m2", "192.0.2.62", priority=2),
                ),
            ),
        ),
    )
    latency = (
        ("198.51.100.0/24", {"azure:westeurope": 12.0, "aws:eu-west-1": 18.5}),
        ("2001:db8:100::/48", {"azure:westeurope": 40.0}),
    )
    return stored(Config(zones=(other, main), latency=latency))


# --- export and round trip -------------------------------------------------------


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_dump_load_export_is_identical(fmt: transfer.Format) -> None:
    document = export_document(sample())
    again = export_document(load(dump(document, fmt), fmt))
    assert again == document
    assert dump(again, fmt) == dump(document, fmt)


def test_a_loaded_configuration_equals_the_exported_one_but_for_ids() -> None:
    loaded = load(dump(export_document(sample()), "yaml"), "yaml")
    original = {z.name: z for z in sample().zones}
    for zone in loaded.zones:
        want = original[zone.name]
        assert zone.ns == want.ns
        assert set(zone.glue) == set(want.glue)
        profiles = {p.name: p for p in want.profiles}
        for p in zone.profiles:
            expected = replace(
                profiles[p.name],
                id=0,
                endpoints=tuple(replace(e, id=0) for e in profiles[p.name].endpoints),
            )
            assert p == expected
    assert loaded.latency == sample().latency
    assert loaded.parked == {}


def test_the_export_is_short_sorted_and_free_of_runtime_fields() -> None:
    document = export_document(sample())
    assert document["version"] == 1
    assert [z["name"] for z in document["zones"]] == ["other.example.", ZONE]
    main = document["zones"][1]
    assert list(main) == ["name", "ns", "soa_email", "negative_ttl", "glue", "profiles"]
    assert main["glue"] == {"ns1.tm.example.": ["192.0.2.53", "2001:db8::53"]}
    assert [p["name"] for p in main["profiles"]] == [
        "@",
        "app",
        "eu.perf",
        "global",
        "web",
    ]
    other = document["zones"][0]
    assert "soa_email" not in other  # the default, hostmaster@<zone>
    app = main["profiles"][1]
    assert app["monitor"] == {
        "protocol": "https",
        "path": "/healthz",
        "host": "www.example.com",
        "headers": {"X-Probe": "tmdns"},
        "expected_status": "200-299,301",
        "interval": 10,
        "timeout": 5,
        "tolerated_failures": 2,
        "method": "HEAD",
    }
    # priorities 1, 2 in listed order are what loading assigns: left out
    assert app["endpoints"][0] == {"name": "primary", "address": "192.0.2.10"}
    assert app["endpoints"][1]["override"] == {
        "state": "drain",
        "reason": "patching",
        "until": 1_900_000_000,
    }
    web = main["profiles"][4]
    assert [e["priority"] for e in web["endpoints"]] == [5, 9, 7]
    assert [e["name"] for e in web["endpoints"]] == ["a", "b", "cdn"]  # as configured
    assert web["endpoints"][2] == {
        "name": "cdn",
        "kind": "host",
        "target": "edge.cdn.example.",
        "priority": 7,
    }
    perf = main["profiles"][2]["endpoints"]
    assert perf[0]["location"] == {"region": "azure:westeurope"}
    assert perf[1]["location"] == {"lat": 48.1, "lon": 11.6}
    text = dump(document, "json")
    for runtime in ('"id"', '"fqdn"', "parked"):
        assert runtime not in text
    endpoints = [
        e for z in document["zones"] for p in z["profiles"] for e in p["endpoints"]
    ]
    assert not any("state" in e for e in endpoints)  # health: only the override's
    assert document["latency"][0] == {
        "network": "198.51.100.0/24",
        "rtt": {"aws:eu-west-1": 18.5, "azure:westeurope": 12},
    }


def test_the_output_does_not_depend_on_the_order_things_were_stored_in() -> None:
    config = sample()
    shuffled = replace(
        config,
        zones=tuple(
            replace(z, profiles=tuple(reversed(z.profiles)), glue=z.glue[::-1])
            for z in reversed(config.zones)
        ),
    )
    for fmt in ("yaml", "json"):
        assert dump(export_document(shuffled), fmt) == dump(
            export_document(config), fmt
        )


def test_dump_formats() -> None:
    document = export_document(sample())
    text = dump(document, "json")
    assert text.endswith("}\n") and text.startswith('{\n  "version": 1,')
    assert json.loads(text) == document
    yaml_text = dump(document, "yaml")
    assert yaml_text.startswith("version: 1\nzones:\n")
    assert "name: '@'" in yaml_text  # YAML would misread a bare @


def test_format_of_a_file_name() -> None:
    assert transfer.format_of("site/TMDNS.JSON") == "json"
    assert transfer.format_of("tmdns.yaml") == "yaml"
    assert transfer.format_of("tmdns.yml") == "yaml"


# --- load: errors at their place ---------------------------------------------------

BAD_WEIGHT = """\
version: 1
zones:
  - name: tm.example
    ns: [ns1.example.net]
    profiles:
      - name: web
        method: weighted
        endpoints:
          - name: a
            address: 192.0.2.11
            weight: 3
          - name: b
            address: 192.0.2.12
            weight: -1
"""


def errors_of(text: str, fmt: transfer.Format = "yaml") -> list[str]:
    with pytest.raises(TransferError) as caught:
        load(text, fmt, source="tmdns." + fmt)
    return list(caught.value.errors)


def test_a_bad_value_is_reported_at_its_line_and_column_with_its_path() -> None:
    assert errors_of(BAD_WEIGHT) == [
        "tmdns.yaml:14:13: zones.0.profiles.0.endpoints.1.weight: "
        "Input should be greater than or equal to 0"
    ]


def test_the_same_error_in_json_has_its_json_position() -> None:
    document = json.loads(json.dumps(load_yaml_data(BAD_WEIGHT)))
    text = json.dumps(document, indent=2)
    [(line, column)] = [
        (i, row.index('"weight"') + 1)
        for i, row in enumerate(text.splitlines(), 1)
        if '"weight": -1' in row
    ]
    [error] = errors_of(text, "json")
    assert error.startswith(
        f"tmdns.json:{line}:{column}: zones.0.profiles.0.endpoints.1"
    )
    assert error.endswith(".weight: Input should be greater than or equal to 0")


def load_yaml_data(text: str) -> object:
    import yaml

    return yaml.safe_load(text)


def test_an_unknown_key_is_named_at_its_line() -> None:
    text = BAD_WEIGHT.replace("weight: -1", "weight: 1\n            wieght: 2")
    assert errors_of(text) == [
        "tmdns.yaml:15:13: zones.0.profiles.0.endpoints.1.wieght: "
        "Extra inputs are not permitted"
    ]


def test_a_missing_field_is_reported_at_the_object_lacking_it() -> None:
    text = BAD_WEIGHT.replace("        method: weighted\n", "").replace(
        "weight: -1", "weight: 1"
    )
    assert errors_of(text) == [
        "tmdns.yaml:6:9: zones.0.profiles.0.method: Field required"
    ]


def test_a_kind_rule_is_reported_at_the_field_it_needs() -> None:
    text = BAD_WEIGHT.replace("address: 192.0.2.12", "kind: host")
    text = text.replace("weight: -1", "weight: 2")
    assert errors_of(text) == [
        "tmdns.yaml:12:13: zones.0.profiles.0.endpoints.1.target: "
        "a host endpoint needs a target"
    ]


def test_every_error_is_reported_in_file_order() -> None:
    text = BAD_WEIGHT.replace("method: weighted", "method: fastest").replace(
        "ns: [ns1.example.net]", "ns: [ns1.example.net]\n    negative_ttl: -1"
    )
    errors = errors_of(text)
    assert [e.split(": ")[0] for e in errors] == [
        "tmdns.yaml:5:5",
        "tmdns.yaml:8:9",
        "tmdns.yaml:15:13",
    ]
    assert "zones.0.profiles.0.method: Input should be 'priority'" in errors[1]


def test_an_unquoted_norway_gets_a_hint() -> None:
    text = BAD_WEIGHT.replace("weight: -1", "weight: 1\n            geo: [DE, NO]")
    [error] = errors_of(text)
    assert error.startswith(
        "tmdns.yaml:15:23: zones.0.profiles.0.endpoints.1.geo.1: "
        "Input should be a valid string"
    )
    assert error.endswith("(YAML reads this unquoted value as a boolean: quote it)")
    assert load(text.replace("NO]", "'NO']"), "yaml").zones[0].profiles[0].endpoints[
        1
    ].geo == ("DE", "NO")


def test_an_unquoted_ipv6_address_read_as_a_number_gets_a_hint() -> None:
    text = BAD_WEIGHT.replace("weight: -1", "weight: 1").replace(
        "192.0.2.12", "1:2:3:4:5:6:7:8"
    )
    [error] = errors_of(text)
    assert error == (
        "tmdns.yaml:13:13: zones.0.profiles.0.endpoints.1.address: an IP address "
        "must be a string (YAML reads this unquoted value as a number: quote it)"
    )


def test_yaml_syntax_errors_name_their_line() -> None:
    text = "version: 1\nzones:\n  - name: tm.example\n    ns: [ns1.example.net\n"
    [error] = errors_of(text)
    assert error.startswith("tmdns.yaml:5:1: YAML: ")
    [error] = errors_of("version: 1\nzones:\n- name: a\n  ns: b\n - name: c\n")
    assert error.startswith("tmdns.yaml:5:2: YAML: ")


def test_json_syntax_errors_name_their_line() -> None:
    assert errors_of('{\n  "version": 1,\n  "zones": [,]\n}\n', "json") == [
        "tmdns.json:3:13: JSON: Expecting value"
    ]
    [error] = errors_of('{"version": 1, "zones": [], "x": NaN}', "json")
    assert error == "tmdns.json:1:34: JSON: NaN is not a JSON value"


def test_an_empty_or_odd_document() -> None:
    assert errors_of("") == ["tmdns.yaml:1:1: the document is empty"]
    assert errors_of("- 1\n") == ["tmdns.yaml:1:1: Input should be an object"]
    assert errors_of("zones: []\n") == ["tmdns.yaml:1:1: version: Field required"]
    assert errors_of("version: 2\nzones: []\n") == [
        "tmdns.yaml:1:1: version: Input should be 1"
    ]


def test_repeated_keys_are_errors() -> None:
    text = BAD_WEIGHT.replace("weight: -1", "weight: 1\n            weight: 2")
    assert errors_of(text) == [
        "tmdns.yaml:15:13: zones.0.profiles.0.endpoints.1: "
        "key 'weight' is repeated (first at line 14)"
    ]
    assert errors_of('{"version": 1,\n "version": 1}', "json") == [
        "tmdns.json:2:2: key 'version' is repeated (first at line 1)"
    ]


def test_repeated_zones_and_profiles_name_both_lines() -> None:
    text = """\
version: 1
zones:
  - name: tm.example
    ns: [ns1.example.net]
    profiles:
      - {name: web, method: weighted}
      - {name: web.tm.example., method: priority}
  - name: TM.example.
    ns: [ns1.example.net]
"""
    assert errors_of(text) == [
        "tmdns.yaml:7:10: zones.0.profiles.1.name: profile web.tm.example. is "
        "also defined at line 6",
        "tmdns.yaml:8:5: zones.1.name: zone tm.example. is also defined at line 3",
    ]


def test_the_stores_rules_are_checked_at_their_lines() -> None:
    text = BAD_WEIGHT.replace("weight: 3", "priority: 4").replace(
        "weight: -1", "priority: 4"
    )
    clash = "priority 4 is used by more than one endpoint ('a' and 'b')"
    assert errors_of(text) == [
        f"tmdns.yaml:11:13: zones.0.profiles.0.endpoints.0.priority: {clash}",
        f"tmdns.yaml:14:13: zones.0.profiles.0.endpoints.1.priority: {clash}",
    ]
    cycle = """\
version: 1
zones:
  - name: tm.example
    ns: [ns1.example.net]
    profiles:
      - name: a
        method: priority
        endpoints: [{name: x, kind: nested, child: b}]
      - name: b
        method: priority
        endpoints: [{name: y, kind: nested, child: a}]
      - name: c
        method: priority
        endpoints: [{name: z, kind: nested, child: elsewhere}]
"""
    errors = errors_of(cycle)
    assert errors and all(e.startswith("tmdns.yaml:3:5: zones.0: ") for e in errors)
    assert "cycle: a → b → a" in errors[0]
    assert not any("elsewhere" in e for e in errors)  # may exist in the database


def test_a_zone_without_ns_names_an_existing_zone() -> None:
    text = (
        "version: 1\nzones:\n- name: tm.example\n"
        "  profiles:\n  - {name: a, method: priority}\n"
    )
    config = load(text, "yaml")
    assert transfer.is_reference(config.zones[0])
    assert export_document(config) == {
        "version": 1,
        "zones": [{"name": ZONE, "profiles": [{"name": "a", "method": "priority"}]}],
    }
    [error] = errors_of(text.replace("  profiles:", "  negative_ttl: 30\n  profiles:"))
    assert error.startswith("tmdns.yaml:3:3: zones.0: negative_ttl needs 'ns'")


def test_latency_networks_are_validated_and_unique() -> None:
    text = """\
version: 1
latency:
  - {network: 198.51.100.0/24, rtt: {azure:westeurope: 12}}
  - {network: 198.51.100.1/24, rtt: {azure:westeurope: 12}}
  - {network: 198.51.100.0/24, rtt: {azure:westeurope: 13}}
"""
    errors = errors_of(text)
    assert errors[0].startswith("tmdns.yaml:4:6: latency.1.network: ")
    text = text.replace("198.51.100.1/24", "203.0.113.0/24")
    assert errors_of(text) == [
        "tmdns.yaml:5:6: latency.2.network: network 198.51.100.0/24 is also "
        "defined at line 3"
    ]


# --- plan and describe --------------------------------------------------------------


def desired_from(config: Config) -> Config:
    return load(dump(export_document(config), "yaml"), "yaml")


def edit(config: Config, zone: str, profile: Profile | None, name: str) -> Config:
    """`config` with profile `name` of `zone` replaced (None: removed)."""
    zones = []
    for z in config.zones:
        if z.name == zone:
            kept = tuple(p for p in z.profiles if p.name != name)
            zones.append(replace(z, profiles=kept + ((profile,) if profile else ())))
        else:
            zones.append(z)
    return replace(config, zones=tuple(zones))


def profile(config: Config, zone: str, name: str) -> Profile:
    [z] = [z for z in config.zones if z.name == zone]
    [p] = [p for p in z.profiles if p.name == name]
    return p


def test_nothing_changes_when_the_file_matches_the_store() -> None:
    current = sample()
    assert transfer.plan(current, desired_from(current), prune=True) == []


def test_create_update_and_delete_without_prune() -> None:
    current = sample()
    desired = desired_from(current)
    web = profile(desired, ZONE, "web")
    faster = replace(
        web,
        ttl=30,
        endpoints=(
            replace(web.endpoints[0], weight=5),
            web.endpoints[1],
            replace(web.endpoints[0], name="new", address=ip_address("192.0.2.12")),
        ),
    )
    desired = edit(desired, ZONE, faster, "web")
    desired = edit(desired, ZONE, None, "app")  # absent: kept without prune
    added = Profile(
        name="new-app", method=Method.PRIORITY, endpoints=(ep("n", "192.0.2.70"),)
    )
    desired = edit(desired, ZONE, added, "new-app")
    changes = transfer.plan(current, desired, prune=False)
    assert [(c.action, c.kind, c.zone, c.name) for c in changes] == [
        ("create", "profile", ZONE, "new-app"),
        ("update", "profile", ZONE, "web"),
    ]
    assert describe(changes) == [
        "+ profile new-app.tm.example.",
        "~ profile web.tm.example. (ttl 60 → 30, endpoints +new ~a -cdn)",
    ]
    update = changes[1]
    before, after = update.before, update.after
    assert isinstance(before, Profile) and isinstance(after, Profile)
    assert before == profile(current, ZONE, "web")
    # the store reconciles endpoints by id: kept endpoints keep theirs
    assert after.id == before.id
    assert [e.id for e in after.endpoints] == [
        before.endpoints[0].id,
        before.endpoints[1].id,
        0,
    ]


def test_prune_deletes_what_the_file_leaves_out() -> None:
    current = sample()
    desired = desired_from(current)
    desired = edit(desired, ZONE, None, "app")
    desired = replace(
        desired,
        zones=tuple(z for z in desired.zones if z.name == ZONE),
        latency=(),
    )
    changes = transfer.plan(current, desired, prune=True)
    assert describe(changes) == [
        "- profile app.tm.example.",
        "- zone other.example. (with its 1 profile)",
        "- latency (2 networks)",
    ]
    assert transfer.plan(current, desired, prune=False) == []


def test_new_zones_come_first_and_children_before_parents() -> None:
    current = Config()
    desired = desired_from(sample())
    changes = transfer.plan(current, desired, prune=True)
    lines = describe(changes)
    assert lines[:2] == ["+ zone other.example.", "+ zone tm.example."]
    assert lines.index("+ profile eu.perf.tm.example.") < lines.index(
        "+ profile global.tm.example."
    )
    assert lines[-1] == "+ latency (2 networks)"
    zone_create = changes[1]
    assert isinstance(zone_create.after, Zone) and zone_create.after.profiles == ()
    # applied in order, the plan gives what the file describes
    result = transfer.apply_plan(current, changes)
    assert export_document(result) == export_document(desired)
    assert transfer.config_problems(result) == []


def test_deletes_remove_parents_before_their_children() -> None:
    current = sample()
    desired = edit(
        edit(desired_from(current), ZONE, None, "global"), ZONE, None, "eu.perf"
    )
    lines = describe(transfer.plan(current, desired, prune=True))
    assert lines == ["- profile global.tm.example.", "- profile eu.perf.tm.example."]


def test_zone_settings_and_latency_updates() -> None:
    current = sample()
    desired = desired_from(current)
    desired = replace(
        desired,
        zones=tuple(
            replace(z, negative_ttl=120, ns=(*z.ns, "ns3.example.net."))
            if z.name == ZONE
            else z
            for z in desired.zones
        ),
        latency=(*desired.latency, ("203.0.113.0/24", {"gcp:us-east1": 90.0})),
    )
    changes = transfer.plan(current, desired, prune=False)
    assert describe(changes) == [
        "~ zone tm.example. (ns, negative_ttl 30 → 120)",
        "~ latency (2 → 3 networks)",
    ]
    zone_change = changes[0]
    assert isinstance(zone_change.after, Zone) and isinstance(zone_change.before, Zone)
    assert zone_change.after.id == zone_change.before.id
    assert zone_change.after.profiles == zone_change.before.profiles
    assert zone_change.after.ns[-1] == "ns3.example.net."
    assert changes[1].after == desired.latency


def test_a_monitor_change_is_described_field_by_field() -> None:
    current = sample()
    app = profile(current, ZONE, "app")
    changed = replace(app, monitor=replace(app.monitor, interval=30.0, path="/"))
    desired = edit(desired_from(current), ZONE, changed, "app")
    assert describe(transfer.plan(current, desired, prune=False)) == [
        "~ profile app.tm.example. "
        "(monitor.path /healthz → /, monitor.interval 10 → 30)"
    ]


def test_latency_is_only_emptied_with_prune_and_order_does_not_matter() -> None:
    current = sample()
    reordered = replace(current, latency=current.latency[::-1])
    assert transfer.plan(current, reordered, prune=True) == []
    emptied = replace(current, latency=())
    assert transfer.plan(current, emptied, prune=False) == []
    [change] = transfer.plan(current, emptied, prune=True)
    assert change == Change(
        ChangeAction.DELETE, ChangeKind.LATENCY, "", None, current.latency, None
    )


def test_a_zone_named_without_ns_must_exist() -> None:
    desired = load("version: 1\nzones:\n- name: new.example\n  profiles: []\n", "yaml")
    with pytest.raises(TransferError, match=r"zone new\.example\. does not exist"):
        transfer.plan(Config(), desired, prune=False)
    reference = load("version: 1\nzones:\n- name: tm.example\n", "yaml")
    current = sample()
    assert transfer.plan(current, reference, prune=False) == []
    pruned = describe(transfer.plan(current, reference, prune=True))
    assert "- zone other.example. (with its 1 profile)" in pruned
    assert "- profile app.tm.example." in pruned
    assert not any(line.startswith("~ zone") for line in pruned)


def test_config_problems_catch_what_only_the_whole_zone_shows() -> None:
    current = sample()
    desired = edit(desired_from(current), ZONE, None, "eu.perf")
    changes = transfer.plan(current, desired, prune=True)
    problems = transfer.config_problems(transfer.apply_plan(current, changes))
    assert problems == [
        "tm.example.: profile 'global' nests 'eu.perf', which is not a profile "
        "of tm.example."
    ]


def test_a_body_check_survives_export_and_import() -> None:
    """body_contains is part of the monitor: a configuration moved between
    installations keeps checking for the same string."""
    checked = Monitor(protocol=MonitorProtocol.HTTP, path="/ok", body_contains="up")
    zone = sample().zones[0]
    profile = replace(zone.profiles[0], monitor=checked)
    config = replace(sample(), zones=(replace(zone, profiles=(profile,)),))
    text = dump(export_document(config), "yaml")
    assert "body_contains: up" in text
    [loaded] = [p for p in load(text, "yaml").zones[0].profiles]
    assert loaded.monitor.body_contains == "up"


def test_a_quorum_survives_export_and_import() -> None:
    """A profile that needs every vantage to agree keeps needing it when its
    configuration moves to another installation."""
    zone = sample().zones[0]
    profile = replace(zone.profiles[0], monitor=Monitor(quorum=Quorum.ALL))
    config = replace(sample(), zones=(replace(zone, profiles=(profile,)),))
    text = dump(export_document(config), "yaml")
    assert "quorum: all" in text
    [loaded] = [p for p in load(text, "yaml").zones[0].profiles]
    assert loaded.monitor.quorum is Quorum.ALL


def test_a_degraded_ttl_survives_export_and_import_and_is_left_out_when_unset() -> None:
    zone = sample().zones[0]
    profile = replace(zone.profiles[0], ttl=30, ttl_degraded=10)
    config = replace(sample(), zones=(replace(zone, profiles=(profile,)),))
    text = dump(export_document(config), "yaml")
    assert "ttl_degraded: 10" in text
    assert load(text, "yaml").zones[0].profiles[0].ttl_degraded == 10
    unset = dump(
        export_document(
            replace(
                config,
                zones=(replace(zone, profiles=(replace(profile, ttl_degraded=None),)),),
            )
        ),
        "yaml",
    )
    assert "ttl_degraded" not in unset


def test_min_available_survives_export_and_import_as_written() -> None:
    zone = sample().zones[0]
    for written, value in (
        ("min_available: 50%", MinAvailable(percent=50)),
        ("min_available: 2", MinAvailable(count=2)),
    ):
        profile = replace(zone.profiles[0], min_available=value)
        config = replace(sample(), zones=(replace(zone, profiles=(profile,)),))
        text = dump(export_document(config), "yaml")
        assert written in text
        assert load(text, "yaml").zones[0].profiles[0].min_available == value


# --- static rrsets ------------------------------------------------------------


RRSET_DOC = """
version: 1
zones:
- name: tm.example.
  ns: [ns1.example.net.]
  rrsets:
  - {name: "@", type: MX, records: ["10 mail"]}
  - {name: _acme-challenge.sip, type: txt, ttl: 30, records: ['"token"']}
"""


def test_rrsets_load_export_and_plan_as_a_zone_setting() -> None:
    loaded = load(RRSET_DOC, "yaml")
    [zone] = loaded.zones
    # Names made absolute, names in the data too, sorted by name and type.
    assert [
        (r.name, r.rtype, r.ttl, [d.text for d in r.records]) for r in zone.rrsets
    ] == [
        ("_acme-challenge.sip.tm.example.", 16, 30, ['"token"']),
        ("tm.example.", 15, 60, ["10 mail.tm.example."]),
    ]
    document = export_document(loaded)
    assert document["zones"][0]["rrsets"] == [
        {
            "name": "_acme-challenge.sip",
            "type": "TXT",
            "ttl": 30,
            "records": ['"token"'],
        },
        {"name": "@", "type": "MX", "records": ["10 mail.tm.example."]},
    ]
    assert export_document(load(dump(document, "json"), "json")) == document
    # An import with another set changes the zone; the same set changes nothing.
    assert transfer.plan(loaded, loaded, prune=False) == []
    fewer = replace(loaded, zones=(replace(zone, rrsets=zone.rrsets[:1]),))
    [change] = transfer.plan(loaded, fewer, prune=False)
    assert change.after is not None and len(change.after.rrsets) == 1


def test_bad_rrsets_are_reported_at_their_lines() -> None:
    bad = RRSET_DOC.replace('"10 mail"', '"ten mail"').replace("type: txt", "type: SOA")
    with pytest.raises(TransferError) as caught:
        load(bad, "yaml")
    text = str(caught.value)
    assert "zones.0.rrsets.0.records.0" in text and "is not MX data" in text
    assert "zones.0.rrsets.1.type" in text and "is not one of" in text
