"""Cross-object rules that a single field cannot express; each yields a Problem.

The store runs these inside the write transaction, so a rejected change leaves
the database as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain import names
from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    HttpMethod,
    Method,
    Monitor,
    MonitorProtocol,
    Profile,
    Zone,
)
from app.domain.ranges import AddressRange, parse_range
from app.domain.snapshot import MAX_NESTING
from app.domain.static_rules import static_problems


@dataclass(frozen=True, slots=True)
class Problem:
    field: str  # dotted path as in the API body, e.g. "endpoints.1.priority"
    message: str


class Invalid(ValueError):
    """The change breaks a rule; nothing was written. Raised before any write,
    by the one validation every entry point (API, import, Azure import) uses."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))
        self.problems = tuple(problems)

    @classmethod
    def one(cls, field: str, message: str) -> Invalid:
        return cls([Problem(field, message)])

    def within(self, prefix: str) -> Invalid:
        """The same problems with `prefix` taken off their fields: an endpoint
        resource reports `priority`, not `endpoints.2.priority`."""
        return Invalid(
            [Problem(p.field.removeprefix(prefix), p.message) for p in self.problems]
        )


def profile_problems(profile: Profile, zone: str | None = None) -> list[Problem]:
    """What is wrong with one profile and its endpoints, field by field; with
    its zone, also whether every name it owns fits in DNS."""
    problems = length_problems(profile, zone) if zone is not None else []
    problems += _uniqueness_problems(profile)
    problems += _service_problems(profile)
    problems += _subnet_problems(profile)
    problems += _monitor_problems("monitor", profile.monitor)
    if profile.ttl_degraded is not None and profile.ttl_degraded > profile.ttl:
        problems.append(
            Problem(
                "ttl_degraded",
                f"ttl_degraded ({profile.ttl_degraded}) must not exceed ttl "
                f"({profile.ttl}): it is for coming back sooner",
            )
        )
    if profile.all_down is AllDown.FALLBACK and profile.fallback is None:
        problems.append(
            Problem("fallback", "all_down 'fallback' needs a 'fallback' address")
        )
    for i, e in enumerate(profile.endpoints):
        at = f"endpoints.{i}"
        if e.monitor is not None:
            problems += _monitor_problems(f"{at}.monitor", e.monitor)
        if e.kind is EndpointKind.ADDRESS and e.address is None:
            problems.append(
                Problem(f"{at}.address", "an address endpoint needs an address")
            )
        if e.kind is EndpointKind.HOST and profile.name == names.APEX:
            problems.append(
                Problem(
                    f"{at}.kind",
                    "a profile at the zone apex cannot answer with a CNAME "
                    "(the apex holds SOA and NS): use address endpoints",
                )
            )
        if e.kind is not EndpointKind.ADDRESS and profile.method is Method.MULTIVALUE:
            problems.append(
                Problem(
                    f"{at}.kind", "multivalue answers addresses: use address endpoints"
                )
            )
        if e.kind is EndpointKind.HOST and e.target is None:
            problems.append(Problem(f"{at}.target", "a host endpoint needs a target"))
        if e.kind is EndpointKind.NESTED and e.child is None:
            problems.append(
                Problem(f"{at}.child", "a nested endpoint needs a child profile")
            )
        if e.kind is EndpointKind.NESTED and e.always_serve:
            problems.append(
                Problem(
                    f"{at}.always_serve",
                    "a nested endpoint follows its child profile's health: "
                    "always_serve does not apply (as in Azure)",
                )
            )
        if e.kind is EndpointKind.NESTED and e.child == profile.name:
            problems.append(Problem(f"{at}.child", "a profile cannot nest itself"))
    return problems


def _monitor_problems(at: str, monitor: Monitor) -> list[Problem]:
    """A probe must give up before the next one is due; a composite monitor
    can require no more checks than it has, and each check must probe."""
    problems = []
    if monitor.timeout >= monitor.interval:
        problems.append(
            Problem(
                f"{at}.timeout",
                f"timeout ({monitor.timeout} s) must be below interval "
                f"({monitor.interval} s)",
            )
        )
    if monitor.require > len(monitor.checks):
        problems.append(
            Problem(
                f"{at}.require",
                f"requires {monitor.require} of {len(monitor.checks)} checks",
            )
        )
    if not monitor.checks:
        return problems + _check_problems(at, monitor)
    for i, check in enumerate(monitor.checks):
        where = f"{at}.checks.{i}"
        if check.protocol is MonitorProtocol.NONE:
            problems.append(
                Problem(f"{where}.protocol", "a check probes one protocol: not none")
            )
        if check.checks:
            problems.append(Problem(f"{where}.checks", "a check cannot hold checks"))
        problems += _check_problems(where, check)
    return problems


def _check_problems(at: str, check: Monitor) -> list[Problem]:
    """A body can only be matched where there is one."""
    if check.body_contains is None:
        return []
    if check.protocol not in (MonitorProtocol.HTTP, MonitorProtocol.HTTPS):
        return [
            Problem(
                f"{at}.body_contains",
                f"only http and https monitors read a body, not {check.protocol}",
            )
        ]
    if check.method is HttpMethod.HEAD:
        return [
            Problem(
                f"{at}.body_contains", "a HEAD request gets no body: use method GET"
            )
        ]
    return []


def _service_problems(profile: Profile) -> list[Problem]:
    """An SRV service is published once, and is served by endpoints the
    profile has (nested ones too: their child's targets)."""
    problems: list[Problem] = []
    known = {e.name for e in profile.endpoints}
    seen: set[str] = set()
    for i, service in enumerate(profile.srv):
        if service.service in seen:
            problems.append(
                Problem(f"srv.{i}.service", f"{service.service} is listed twice")
            )
        seen.add(service.service)
        for j, name in enumerate(service.endpoints):
            if name not in known:
                problems.append(
                    Problem(
                        f"srv.{i}.endpoints.{j}",
                        f"the profile has no endpoint {name!r}",
                    )
                )
    return problems


def _uniqueness_problems(profile: Profile) -> list[Problem]:
    """Names, priorities and geo codes each belong to one endpoint. A clash is
    reported on every endpoint in it, so a change to one endpoint is told about
    its own field, whichever came first."""
    holders: dict[tuple[str, object], list[int]] = {}
    for i, e in enumerate(profile.endpoints):
        keys = [("name", e.name), ("priority", e.priority)]
        keys += [("geo", code) for code in e.geo]
        for key in keys:
            holders.setdefault(key, []).append(i)
    what = {"name": "endpoint name", "priority": "priority", "geo": "geo code"}
    problems: list[Problem] = []
    for (field, value), indexes in holders.items():
        if len(indexes) < 2:
            continue
        who = " and ".join(repr(profile.endpoints[i].name) for i in indexes)
        for i in indexes:
            problems.append(
                Problem(
                    f"endpoints.{i}.{field}",
                    f"{what[field]} {value} is used by more than one endpoint ({who})",
                )
            )
    return problems


def _subnet_problems(profile: Profile) -> list[Problem]:
    """Ranges must parse, and no two may overlap within a profile."""
    problems: list[Problem] = []
    parsed: list[tuple[Endpoint, AddressRange]] = []
    for i, e in enumerate(profile.endpoints):
        for j, text in enumerate(e.subnets):
            try:
                block = parse_range(text)
            except ValueError as exc:
                problems.append(Problem(f"endpoints.{i}.subnets.{j}", str(exc)))
                continue
            for other, seen in parsed:
                if block.overlaps(seen):
                    problems.append(
                        Problem(
                            f"endpoints.{i}.subnets.{j}",
                            f"{text} of endpoint {e.name!r} overlaps {seen.text} "
                            f"of endpoint {other.name!r}",
                        )
                    )
            parsed.append((e, block))
    return problems


def owned_names(profile: Profile, zone: str) -> list[tuple[str, str]]:
    """Every name the profile owns, with who owns it in words (DESIGN §3)."""
    fqdn = names.join(profile.name, zone)
    owned = [(fqdn, f"profile {profile.name!r}")]
    owned += [
        (f"{s.service}.{fqdn}", f"service {s.service} of profile {profile.name!r}")
        for s in profile.srv
    ]
    owned += [
        (f"{e.name}.{fqdn}", f"endpoint {e.name!r} of profile {profile.name!r}")
        for e in profile.endpoints
        if e.kind is EndpointKind.ADDRESS
    ]
    return owned


def length_problems(profile: Profile, zone: str) -> list[Problem]:
    """Every name the profile owns must fit in DNS (255 octets on the wire):
    its own, its SRV names and its endpoints' names."""
    problems: list[Problem] = []
    fqdn = names.join(profile.name, zone)
    fields = [("name", fqdn)]
    fields += [
        (f"srv.{i}.service", f"{s.service}.{fqdn}") for i, s in enumerate(profile.srv)
    ]
    fields += [
        (f"endpoints.{i}.name", f"{e.name}.{fqdn}")
        for i, e in enumerate(profile.endpoints)
        if e.kind is EndpointKind.ADDRESS
    ]
    for field, name in fields:
        if len(name) + 1 > names.MAX_NAME_OCTETS:
            problems.append(
                Problem(field, f"{name} is longer than {names.MAX_NAME_OCTETS} octets")
            )
    return problems


def neighbour_names(profile: Profile, zone: str) -> frozenset[str]:
    """The other profiles the zone-wide rules look at for this one: those that
    could own one of its names (each owned name's label suffixes inside the
    zone) and its nested children. A write checks the rules against these and
    the nesting graph, not against the whole zone."""
    rivals = {e.child for e in profile.endpoints if e.child is not None}
    for owned, _ in owned_names(profile, zone):
        rivals |= _owners_of(owned, zone)
    return frozenset(rivals)


def glue_neighbour_names(zone: Zone) -> frozenset[str]:
    """The profile names that could own one of the zone's glue names."""
    found: set[str] = set()
    for host, _ in zone.glue:
        if host.endswith("." + zone.name):
            found |= _owners_of(host, zone.name)
    return frozenset(found)


def rrset_neighbour_names(name: str, zone: str) -> frozenset[str]:
    """The profile names that could own a static rrset's name."""
    return frozenset(_owners_of(name, zone))


def _owners_of(name: str, zone: str) -> set[str]:
    """The profile names that own `name` if they exist: each of its label
    suffixes inside the zone, as a profile, SRV or endpoint name."""
    owners = set()
    suffix = name
    # Callers pass names inside the zone, so the loop always ends at the break.
    while suffix.endswith(zone):  # pragma: no branch - see above
        owners.add(names.relative(suffix, zone))
        if suffix == zone:
            break
        suffix = suffix.split(".", 1)[1]
    return owners


def zone_problems(zone: Zone) -> list[Problem]:
    """Owner-name collisions (every name has one owner, DESIGN §3) and nesting:
    children must exist, nesting is at most 10 deep, and never a cycle. The
    zone's own fields are header_problems'."""
    owners: dict[str, str] = {}
    problems = _owner_problems(zone, owners) + _nesting_problems(zone)
    if zone.rrsets:
        problems += [
            Problem(
                "rrsets" if label not in owners.values() else "name", f"{label}: {m}"
            )
            for label, m in static_problems(zone, owners)
        ]
    return problems


def header_problems(zone: Zone) -> list[Problem]:
    """The zone's own fields: a zone below the root, and glue exactly for the
    name servers inside it (without their addresses the delegation cannot be
    followed; glue for a host that is no name server is a mistake)."""
    if zone.name == ".":
        return [
            Problem(
                "name",
                "the root zone cannot be served: delegate a zone below it, "
                "e.g. tm.example.com",
            )
        ]
    problems: list[Problem] = []
    glued = {host for host, _ in zone.glue}
    for i, host in enumerate(zone.ns):
        inside = host == zone.name or host.endswith("." + zone.name)
        if inside and host not in glued:
            problems.append(
                Problem(
                    "glue",
                    f"name server {host} (ns.{i}) is inside the zone: "
                    "give its addresses in 'glue'",
                )
            )
    for host in sorted(glued - set(zone.ns)):
        problems.append(
            Problem("glue", f"{host} is not one of the zone's name servers ('ns')")
        )
    return problems


def _owner_problems(zone: Zone, owners: dict[str, str]) -> list[Problem]:
    """Collisions between profiles' names and glue; `owners` is filled with
    who owns each name, for the static rrsets' rules."""
    problems: list[Problem] = []
    owners.update({host: f"name server {host}" for host, _ in zone.glue})
    for profile in zone.profiles:
        for name, owner in owned_names(profile, zone.name):
            if name in owners and owners[name] != owner:
                problems.append(
                    Problem(
                        "name",
                        f"{name} is already owned by {owners[name]} ({owner} collides)",
                    )
                )
            owners.setdefault(name, owner)
    return problems


def _nesting_problems(zone: Zone) -> list[Problem]:
    children = {
        p.name: [
            e.child for e in p.endpoints if e.kind is EndpointKind.NESTED and e.child
        ]
        for p in zone.profiles
    }
    problems: list[Problem] = []
    for profile in zone.profiles:
        for child in children[profile.name]:
            if child not in children:
                problems.append(
                    Problem(
                        "child",
                        f"profile {profile.name!r} nests {child!r}, "
                        f"which is not a profile of {zone.name}",
                    )
                )
        path = _deepest_path(profile.name, children, ())
        if path and path[-1] in path[:-1]:
            cycle = " → ".join(path[path.index(path[-1]) :])
            problems.append(Problem("child", f"nested profiles form a cycle: {cycle}"))
        elif len(path) > MAX_NESTING + 1:
            problems.append(
                Problem(
                    "child",
                    f"nesting is {len(path) - 1} levels deep; at most "
                    f"{MAX_NESTING} are allowed ({' → '.join(path)})",
                )
            )
    return problems


def _deepest_path(
    name: str, children: dict[str, list[str]], path: tuple[str, ...]
) -> tuple[str, ...]:
    """The longest chain of nesting from `name`; it ends early, repeating a
    name, when it meets a cycle."""
    path = (*path, name)
    if name in path[:-1] or len(path) > MAX_NESTING + 2:
        return path
    longest = path
    for child in children.get(name, []):
        candidate = _deepest_path(child, children, path)
        if candidate[-1] in candidate[:-1]:
            return candidate
        if len(candidate) > len(longest):
            longest = candidate
    return longest
