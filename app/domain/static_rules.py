"""The zone-wide rules of static rrsets (DESIGN §3: every name has one
owner): a name is a profile's, an endpoint's, a name server's glue, or
static, never two; a CNAME stands alone; a delegation (NS below the apex)
hides everything under it but its glue, and gets glue for the name servers
inside it, as the zone's own name servers do."""

from __future__ import annotations

from app.domain import names
from app.domain.model import StaticRRset, Zone
from app.domain.query import RType

# What a static rrset may be; the apex's SOA and NS are the zone's own fields.
STATIC_TYPES = frozenset(
    {
        RType.A,
        RType.AAAA,
        RType.CNAME,
        RType.TXT,
        RType.MX,
        RType.CAA,
        RType.SRV,
        RType.NAPTR,
        RType.PTR,
        RType.NS,
    }
)
GLUE_TYPES = frozenset({RType.A, RType.AAAA})


def rrset_label(rrset: StaticRRset, zone: str) -> str:
    """How the API names an rrset: `_acme-challenge.sip TXT`, `@ MX` (a name
    outside the zone, which is refused, by its absolute name)."""
    inside = rrset.name == zone or rrset.name.endswith("." + zone)
    name = names.relative(rrset.name, zone) if inside else rrset.name
    try:
        kind = RType(rrset.rtype).name
    except ValueError:
        kind = str(rrset.rtype)
    return f"{name} {kind}"


def static_problems(zone: Zone, owners: dict[str, str]) -> list[tuple[str, str]]:
    """(rrset label, what is wrong) for the zone's static rrsets, given who
    owns the other names (`owners`: name → owner in words)."""
    problems: list[tuple[str, str]] = []
    by_name: dict[str, set[int]] = {}
    for rrset in zone.rrsets:
        by_name.setdefault(rrset.name, set()).add(rrset.rtype)
    cuts = {
        r.name: r for r in zone.rrsets if r.rtype == RType.NS and r.name != zone.name
    }
    for rrset in zone.rrsets:
        label = rrset_label(rrset, zone.name)
        for message in _own_problems(rrset, zone, by_name, owners, cuts):
            problems.append((label, message))
    for name, owner in sorted(owners.items()):
        cut = _cut_above(name, cuts, zone.name)
        if cut is not None:
            problems.append(
                (
                    owner,
                    f"{name} is below the delegation at {cut}: delegated names "
                    "are the child zone's",
                )
            )
    return problems


def _own_problems(
    rrset: StaticRRset,
    zone: Zone,
    by_name: dict[str, set[int]],
    owners: dict[str, str],
    cuts: dict[str, StaticRRset],
) -> list[str]:
    name, rtype = rrset.name, rrset.rtype
    if name != zone.name and not name.endswith("." + zone.name):
        return [f"{name} is not inside the zone {zone.name}"]
    if rtype not in STATIC_TYPES:
        return [f"type {rtype} cannot be a static rrset"]
    found: list[str] = []
    if name in owners:
        found.append(f"{name} is already owned by {owners[name]}")
    if name == zone.name and rtype in (RType.CNAME, RType.NS):
        found.append(
            "the apex cannot have a CNAME (it has SOA and NS)"
            if rtype == RType.CNAME
            else "the apex's NS are the zone's 'ns'; NS below the apex delegate"
        )
    if rtype == RType.CNAME and len(by_name[name]) > 1:
        others = sorted(RType(t).name for t in by_name[name] - {RType.CNAME})
        found.append(f"a CNAME has no other records beside it ({', '.join(others)})")
    if rtype == RType.CNAME and len(rrset.records) != 1:
        found.append("a CNAME rrset has exactly one record")
    cut = _cut_above(name, cuts, zone.name, strict=True)
    if cut is not None and not (rtype in GLUE_TYPES and name in _hosts(cuts[cut])):
        found.append(
            f"{name} is below the delegation at {cut}: only the A/AAAA glue of "
            "its name servers may be here"
        )
    if name in cuts and rtype != RType.NS and name != zone.name:
        found.append(f"{name} is delegated (NS): it can have no other records")
    if rtype == RType.NS and name in cuts:
        for host in _hosts(rrset):
            inside = host == name or host.endswith("." + name)
            if inside and not by_name.get(host, set()) & GLUE_TYPES:
                found.append(
                    f"name server {host} is inside the delegation: add its A or "
                    "AAAA rrset (glue) first"
                )
    return found


def _hosts(ns: StaticRRset) -> set[str]:
    return {r.text.lower() for r in ns.records}


def _cut_above(
    name: str, cuts: dict[str, StaticRRset], apex: str, strict: bool = False
) -> str | None:
    """The delegation `name` is below (or at, unless `strict`)."""
    at = name if not strict or name == apex else name.split(".", 1)[1]
    while at.endswith(apex) and at != apex:
        if at in cuts:
            return at
        at = at.split(".", 1)[1]
    return None
