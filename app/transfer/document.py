"""Config → short, canonical document and its text; reads or validates nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from app.domain.model import Config, Profile, StaticRRset, Zone
from app.domain.regions import region_coordinates
from app.schemas import ProfileIn, ProfileOut, ZoneIn, ZoneOut
from app.schemas.rrsets import RRsetIn, RRsetOut
from app.transfer.model import VERSION, Format, is_reference

# libyaml's emitter when PyYAML has it (about 10× faster: a 10,000-profile zone
# is 9 MB of YAML), the pure-Python one otherwise; the text is the same.
SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def format_of(path: str) -> Format:
    """The format a file name implies: .json is JSON, anything else YAML."""
    return "json" if path.lower().endswith(".json") else "yaml"


def export_document(config: Config) -> dict[str, Any]:
    """The configuration as a document: short (defaults left out), deterministic,
    without runtime fields (ids, fqdn, health state, the parked endpoint)."""
    document: dict[str, Any] = {
        "version": VERSION,
        "zones": [_zone_entry(z) for z in sorted(config.zones, key=lambda z: z.name)],
    }
    if config.latency:
        document["latency"] = [
            {"network": network, "rtt": dict(sorted(rtt.items()))}
            for network, rtt in config.latency
        ]
    tidy: dict[str, Any] = _tidy(document)
    return tidy


def _tidy(value: Any) -> Any:
    """Whole floats written as integers (`interval: 10`, not `10.0`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _tidy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def dump(document: Mapping[str, Any], fmt: Format) -> str:
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(
        dict(document),
        Dumper=SafeDumper,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
    )


def _zone_entry(zone: Zone) -> dict[str, Any]:
    if is_reference(zone):
        entry: dict[str, Any] = {"name": zone.name}
    else:
        entry = zone_in(zone).model_dump(mode="json", exclude_defaults=True)
        if entry.get("soa_email") == _default_email(zone.name):
            del entry["soa_email"]
    if zone.rrsets:
        entry["rrsets"] = [_rrset_entry(r, zone.name) for r in zone.rrsets]
    profiles = sorted(zone.profiles, key=lambda p: p.name)
    if profiles:
        entry["profiles"] = [profile_entry(profile_in(p, zone.name)) for p in profiles]
    return entry


def _rrset_entry(rrset: StaticRRset, zone: str) -> dict[str, Any]:
    """An rrset as the API shows it; the default TTL left out."""
    entry: dict[str, Any] = RRsetOut.from_domain(rrset, zone).model_dump(mode="json")
    if entry["ttl"] == RRsetIn.model_fields["ttl"].default:
        del entry["ttl"]
    return entry


def profile_entry(profile: ProfileIn) -> dict[str, Any]:
    """A profile as the document writes it: fields at their defaults left out,
    priorities left out when they are the 1, 2, 3… that listing order gives,
    and a location named by its region written as the region alone."""
    body = profile.model_dump(mode="json", exclude_defaults=True)
    endpoints: list[dict[str, Any]] = body.get("endpoints", [])
    # An endpoint's monitor overrides the profile's field by field: write only
    # the fields where the two differ, which is what an import merges back.
    shared = profile.monitor.model_dump(mode="json")
    for e, source in zip(endpoints, profile.endpoints, strict=True):
        if source.monitor is not None:
            own = source.monitor.model_dump(mode="json")
            e["monitor"] = {k: v for k, v in own.items() if shared.get(k) != v}
    if [e.get("priority") for e in endpoints] == list(range(1, len(endpoints) + 1)):
        for e in endpoints:
            del e["priority"]
    for e in endpoints:
        location = e.get("location")
        if location and location.get("region"):
            coordinates = region_coordinates(location["region"])
            if coordinates == (location.get("lat"), location.get("lon")):
                e["location"] = {"region": location["region"]}
    tidy: dict[str, Any] = _tidy(body)
    return tidy


def _default_email(zone: str) -> str:
    return f"hostmaster@{zone.rstrip('.')}"


def zone_in(zone: Zone) -> ZoneIn:
    """ZoneIn with glue in a canonical order (name servers, then addresses)."""
    out = ZoneOut.from_domain(zone)
    glue = {
        host: sorted(addrs, key=lambda a: (a.version, int(a)))
        for host, addrs in sorted(out.glue.items())
    }
    return ZoneIn.model_construct(
        name=out.name,
        ns=out.ns,
        soa_email=out.soa_email,
        negative_ttl=out.negative_ttl,
        glue=glue,
    )


def profile_in(profile: Profile, zone: str) -> ProfileIn:
    """Stored values are written out as they are: validated on the way in,
    never again on the way out (a file can always be exported)."""
    out = ProfileOut.from_domain(profile, zone)
    return ProfileIn.model_construct(
        **{name: getattr(out, name) for name in ProfileIn.model_fields}
    )


def zone_doc(zone: Zone) -> dict[str, Any]:
    """Everything about a zone's own fields, defaults included, canonically."""
    return zone_in(zone).model_dump(mode="json")


def profile_doc(profile: Profile, zone: str) -> dict[str, Any]:
    """Everything about a profile, defaults included, without ids or state."""
    return profile_in(profile, zone).model_dump(mode="json")
