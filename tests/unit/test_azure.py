"""Azure Traffic Manager profiles (az CLI output, ARM templates) as documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app import transfer
from app.azure import AzureError, from_azure
from app.domain.model import Config, EndpointKind, Method, MonitorProtocol, Zone

DATA = Path(__file__).parent.parent / "data" / "azure"
ZONE = "tm.example."
EXTERNAL = "Microsoft.Network/trafficManagerProfiles/externalEndpoints"


def convert(name: str) -> tuple[list[dict[str, Any]], list[str], Config]:
    """The profiles and unmapped lines of a sample, and the document loaded
    as an import would load it (so every result is checked by the schemas)."""
    document, unmapped = from_azure((DATA / name).read_text(), "TM.example")
    assert document["version"] == 1
    [zone] = document["zones"]
    assert zone["name"] == ZONE
    assert set(zone) == {"name", "profiles"}  # an existing zone: settings untouched
    config = transfer.load(transfer.dump(document, "json"), "json", source=name)
    assert transfer.export_document(config) == document  # already canonical
    return zone["profiles"], unmapped, config


def test_a_priority_profile_from_az_show() -> None:
    profiles, unmapped, config = convert("priority-show.json")
    profile_monitor = {
        "protocol": "https",
        "port": 443,
        "path": "/healthz",
        "host": "www.contoso.example",  # the Host custom header, in any case
        "headers": {"X-Health-Check": "traffic-manager"},
        "expected_status": "200-299,301",
        "interval": 10,
        "timeout": 5,
        "tolerated_failures": 2,
    }
    assert profiles == [
        {
            "name": "contoso-web",
            "method": "priority",
            "ttl": 30,
            "monitor": profile_monitor,
            "endpoints": [
                {"name": "primary-ams", "address": "192.0.2.10", "priority": 1},
                {
                    "name": "standby-dub",
                    "address": "198.51.100.20",
                    "priority": 10,
                    # only what differs from the profile's monitor: an
                    # endpoint's monitor overrides it field by field
                    "monitor": {
                        "host": "standby.contoso.example",
                        "headers": {
                            "X-Health-Check": "traffic-manager",
                            "X-Probe-Token": "dr-site",
                        },
                    },
                },
            ],
        }
    ]
    assert unmapped == [
        "profile 'contoso-web' endpoint 'Standby DUB': named 'standby-dub' in tmdns "
        "(one DNS label)"
    ]
    [profile] = config.zones[0].profiles
    assert profile.monitor.protocol is MonitorProtocol.HTTPS
    assert profile.monitor.headers == (("X-Health-Check", "traffic-manager"),)
    assert [e.priority for e in profile.endpoints] == [1, 10]


def test_a_geographic_arm_template() -> None:
    profiles, unmapped, config = convert("geographic-template.json")
    assert profiles == [
        {
            "name": "contoso-geo",  # the parameter's defaultValue
            "method": "geographic",
            "monitor": {"protocol": "http", "port": 80},
            "endpoints": [
                {
                    "name": "europe",
                    "kind": "host",
                    "target": "eu.contoso.example.",  # from a variable
                    "geo": ["GEO-EU"],
                },
                {
                    "name": "north-america",
                    "address": "192.0.2.40",
                    "geo": ["GEO-NA", "US-CA", "CA-QC"],
                },
                {  # a resource of its own, named with concat()
                    "name": "rest-of-world",
                    "address": "198.51.100.40",
                    "geo": ["WORLD", "GEO-OC", "DE", "NO"],  # GEO-AP is Oceania
                },
            ],
        }
    ]
    where = "profile 'contoso-geo'"
    assert unmapped == [
        f"{where}: dnsConfig.relativeName 'contoso-geo-prod' "
        "(contoso-geo-prod.trafficmanager.net) is served as contoso-geo.<zone>: "
        "point its CNAMEs there",
        f"{where}: trafficViewEnrollmentStatus Enabled: no Traffic View",
        f"{where}: tags {{'owner': 'platform-team'}} are not kept",
        f"{where} endpoint 'europe': geoMapping 'GEO-ME': Azure's Middle East "
        "region has no tmdns code: list its countries",
        f"{where} endpoint 'europe': geoMapping 'XK': not a tmdns geographic code",
        f"{where} endpoint 'apac': target [parameters('apacTarget')] is an "
        "expression that cannot be evaluated here: add the endpoint with its "
        "address or host name",
    ]
    [profile] = config.zones[0].profiles
    assert profile.method is Method.GEOGRAPHIC
    assert profile.endpoints[2].geo == ("WORLD", "GEO-OC", "DE", "NO")


def test_a_subnet_profile() -> None:
    profiles, unmapped, config = convert("subnet-show.json")
    assert profiles == [
        {
            "name": "contoso-sip",
            "method": "subnet",
            "monitor": {"port": 5060},  # TCP is the default protocol
            "endpoints": [
                {
                    "name": "sbc-office",
                    "address": "192.0.2.200",
                    "subnets": ["192.0.2.0/25", "198.51.100.10-198.51.100.19"],
                },
                {
                    "name": "sbc-partner",
                    "kind": "host",
                    "target": "sbc-partner.contoso.example.",
                    # a lone `first` is one address
                    "subnets": ["2001:db8:100::/48", "198.51.100.77-198.51.100.77"],
                },
                # no ranges: the endpoint for everyone else; Disabled in Azure
                {"name": "sbc-default", "address": "198.51.100.30", "enabled": False},
            ],
        }
    ]
    where = "profile 'contoso-sip'"
    assert unmapped == [
        f"{where} endpoint 'sbc-office': endpointMonitorStatus Degraded is Azure's "
        "last verdict; tmdns probes afresh (the endpoint starts as checking)",
        f"{where} endpoint 'sbc-partner': subnets: '198.51.100.128/24': "
        "198.51.100.128/24 has host bits set",
    ]
    assert config.zones[0].profiles[0].endpoints[2].enabled is False


def test_a_performance_profile_with_nested_profiles() -> None:
    profiles, unmapped, config = convert("nested-template.json")
    probe = {"protocol": "https", "port": 443, "path": "/health"}  # from a variable
    assert profiles == [
        {
            "name": "contoso-eu",
            "method": "priority",
            "ttl": 30,
            "monitor": probe,
            # child resources of the profile; priorities 1, 2 are the listed order
            "endpoints": [
                {"name": "ams", "address": "192.0.2.50"},
                {"name": "dub", "address": "192.0.2.51"},
            ],
        },
        {
            "name": "contoso-global",
            "method": "performance",
            "monitor": probe,
            "endpoints": [
                {
                    "name": "europe",
                    "kind": "nested",
                    "child": "contoso-eu",  # resourceId(..., parameters(...))
                    "min_child_endpoints": 2,
                    "location": {"region": "azure:westeurope"},  # "West Europe"
                },
                {
                    "name": "us",
                    "kind": "nested",
                    "child": "contoso-us",  # the id's last segment
                    "min_child_endpoints_ipv4": 1,
                    "min_child_endpoints_ipv6": 2,
                    "location": {"region": "azure:eastus2"},
                },
                {
                    "name": "singapore",
                    "kind": "host",
                    "target": "sg.contoso.example.",
                    "location": {"region": "azure:southeastasia"},
                    "always_serve": True,
                },
                {"name": "lab", "address": "198.51.100.99", "enabled": False},
            ],
        },
    ]
    where = "profile 'contoso-global'"
    assert unmapped == [
        f"{where}: dnsConfig.relativeName 'contoso' (contoso.trafficmanager.net) "
        "is served as contoso-global.<zone>: point its CNAMEs there",
        f"{where} endpoint 'webapp-westus': azureEndpoints without a target "
        "(targetResourceId Microsoft.Web/sites/contoso-westus): add it with its "
        "address or host name",
        f"{where} endpoint 'lab': endpointLocation 'Moon Base 1' is not a known region",
        f"{where} endpoint 'us': nests profile 'contoso-us', which is not in this "
        "input: it must exist in the zone (convert and import it too)",
    ]
    parent = config.zones[0].profiles[1]
    assert parent.endpoints[0].kind is EndpointKind.NESTED
    assert parent.endpoints[0].location is not None
    assert parent.endpoints[0].location.region == "azure:westeurope"
    # the missing child is checked against the zone it is imported into
    current = Config(zones=(Zone(ZONE, ("ns1.example.net.",), "hostmaster@x"),))
    changes = transfer.plan(current, config, prune=False)
    assert transfer.describe(changes) == [
        "+ profile contoso-eu.tm.example.",
        "+ profile contoso-global.tm.example.",
    ]
    assert transfer.config_problems(transfer.apply_plan(current, changes)) == [
        "tm.example.: profile 'contoso-global' nests 'contoso-us', which is not a "
        "profile of tm.example."
    ]


def test_a_multivalue_profile() -> None:
    profiles, unmapped, _ = convert("multivalue-show.json")
    assert profiles == [
        {
            "name": "contoso-api",
            "method": "multivalue",
            "ttl": 10,
            "enabled": False,  # profileStatus Disabled
            "monitor": {
                "protocol": "http",
                "port": 8080,
                "path": "/ping",
                "expected_status": "200-204",
                "interval": 10,
                "timeout": 9,  # not given: Azure's most for a 10 s interval
                "tolerated_failures": 1,
            },
            "max_return": 3,
            "endpoints": [
                {"name": "api-1", "address": "192.0.2.101"},
                {"name": "api-2", "address": "198.51.100.102", "always_serve": True},
                {"name": "api-3-v6", "address": "2001:db8::103"},
            ],
        }
    ]
    assert unmapped == [
        "profile 'contoso-api': allowedEndpointRecordTypes ['IPv4Address', "
        "'IPv6Address']: tmdns answers each query type from the endpoints of its "
        "family",
        "profile 'contoso-api': tags {'env': 'prod'} are not kept",
    ]


def test_a_profile_list_and_the_rest_api_shape() -> None:
    show = json.loads((DATA / "multivalue-show.json").read_text())
    rest = {
        "id": "/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/"
        "trafficManagerProfiles/Weighted.Web",
        "name": "Weighted.Web",
        "type": "Microsoft.Network/trafficManagerProfiles",
        "location": "global",
        "properties": {
            "trafficRoutingMethod": "Weighted",
            "dnsConfig": {"relativeName": "weighted-web", "ttl": 60},
            "monitorConfig": {"protocol": "TCP", "port": 443, "interval": 30},
            "endpoints": [
                {
                    "name": "blue",
                    "type": EXTERNAL,
                    "properties": {"target": "192.0.2.1", "weight": 900},
                },
                {
                    "name": "Blue!",
                    "type": EXTERNAL,
                    "properties": {
                        "target": "192.0.2.2",
                        "weight": 100,
                        "priority": 7,
                        "futureKnob": True,
                    },
                },
            ],
        },
    }
    document, unmapped = from_azure(json.dumps([show, rest]), ZONE)
    names = [p["name"] for p in document["zones"][0]["profiles"]]
    assert names == ["contoso-api", "weighted.web"]
    weighted = document["zones"][0]["profiles"][1]
    assert weighted["monitor"] == {"port": 443}
    assert weighted["endpoints"] == [
        # priorities only matter to priority profiles: not carried
        {"name": "blue", "address": "192.0.2.1", "weight": 900},
        {"name": "blue-2", "address": "192.0.2.2", "weight": 100},
    ]
    assert unmapped[2:] == [
        "profile 'Weighted.Web': named 'weighted.web' in tmdns (a DNS name)",
        "profile 'Weighted.Web': dnsConfig.relativeName 'weighted-web' "
        "(weighted-web.trafficmanager.net) is served as weighted.web.<zone>: point "
        "its CNAMEs there",
        "profile 'Weighted.Web' monitorConfig: interval 30 is not mapped",
        "profile 'Weighted.Web' endpoint 'Blue!': named 'blue-2' in tmdns (one DNS "
        "label)",
        "profile 'Weighted.Web' endpoint 'Blue!': futureKnob true is not mapped",
    ]
    transfer.load(transfer.dump(document, "yaml"), "yaml")


def test_what_cannot_be_read_is_refused() -> None:
    with pytest.raises(AzureError, match="line 1 column 2"):
        from_azure("{oops", ZONE)
    with pytest.raises(AzureError, match="no Traffic Manager profile found"):
        from_azure('{"resources": [{"type": "Microsoft.Web/sites"}]}', ZONE)
    with pytest.raises(AzureError, match="'Fastest' is not one of"):
        from_azure(
            '{"name": "p", "trafficRoutingMethod": "Fastest", "endpoints": []}', ZONE
        )
    with pytest.raises(AzureError, match="label"):
        from_azure('{"name": "p", "trafficRoutingMethod": "Priority"}', "a..b")
