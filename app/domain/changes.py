"""What changed since a generation, and folding it into the configuration the
last snapshot was compiled from, so a refresh reads and recompiles only that.

The store marks every profile write and every health transition with the
generation that made it; a refresh from generation G reads the profiles and
health rows above G plus a one-line index of all profiles, and the rest is
reused as it is. Rare, wide changes (a zone's own fields, the latency table, a
renamed profile, anything the index cannot account for) answer None: compile
from a full read instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from app.domain.model import Config, Health, LatencyRows, Profile, Quarantined, Zone


@dataclass(frozen=True, slots=True)
class ProfileLine:
    """One profile as the index knows it."""

    zone_id: int
    name: str
    parked: int | None  # priority/parking: the endpoint in use


@dataclass(frozen=True, slots=True)
class Changes:
    """Everything written after `since`, read in one transaction."""

    since: int
    generation: int  # read first: every change up to it is included
    zones: tuple[Zone, ...]  # every zone with its static rrsets, without profiles
    lines: Mapping[int, ProfileLine]  # every profile, by id
    profiles: tuple[tuple[int, Profile], ...]  # (zone id, profile) written after since
    health: Mapping[int, Health]  # endpoint id → health, transitions after since
    latency: LatencyRows
    # What could not be read, by profile id (a zone by minus its id); such a
    # profile keeps the version `fold` already has, if any.
    broken: Mapping[int, Quarantined] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Folded:
    config: Config
    health: Mapping[int, Health]
    dirty: frozenset[int]  # ids of the profiles whose plans must be rebuilt


def header(zone: Zone) -> Zone:
    """The zone's own fields: what answers need, without its profiles and its
    static rrsets (their nodes carry those), so neither makes a new header."""
    return (
        replace(zone, profiles=(), rrsets=()) if zone.profiles or zone.rrsets else zone
    )


def fold(
    config: Config, health: Mapping[int, Health], changes: Changes
) -> Folded | None:
    """The configuration and health as of `changes.generation`, or None when
    only a full read can say (see the module docstring)."""
    if changes.latency != config.latency:
        return None
    if tuple(header(z) for z in config.zones) != tuple(
        header(z) for z in changes.zones
    ):
        return None
    before: dict[int, Profile] = {p.id: p for z in config.zones for p in z.profiles}
    written = {p.id: (zone_id, p) for zone_id, p in changes.profiles}
    dirty: set[int] = set(written)
    for profile_id, line in changes.lines.items():
        old = before.get(profile_id)
        if old is None and profile_id not in written:
            if profile_id in changes.broken:
                continue  # unreadable and never had a good version: left out
            return None  # a profile the index has but no read brought
        if old is not None and old.name != line.name:
            return None  # nested parents name their children: read them all again
        if line.parked != config.parked.get(profile_id):
            dirty.add(profile_id)
    gone = set(before.keys() - changes.lines.keys())
    dirty |= gone
    owner = {e.id: p.id for z in config.zones for p in z.profiles for e in p.endpoints}
    for endpoint_id in changes.health:
        if endpoint_id in owner:
            dirty.add(owner[endpoint_id])
    # The zone headers equal the config's (checked above): every zone has its entry.
    profiles_of = {z.id: z.profiles for z in config.zones}
    zones = []
    for zone in changes.zones:
        kept = [
            written[p.id][1] if p.id in written else p
            for p in profiles_of[zone.id]
            if p.id not in gone
        ]
        known = {p.id for p in kept}
        kept += [
            p
            for zone_id, p in changes.profiles
            if zone_id == zone.id and p.id not in known
        ]
        kept.sort(key=lambda p: p.id)
        zones.append(replace(zone, profiles=tuple(kept)))
    parked = {
        pid: line.parked
        for pid, line in changes.lines.items()
        if line.parked is not None
    }
    # Still unreadable unless written since: a quarantine lasts until a write.
    broken = {
        pid: q
        for pid, q in config.broken.items()
        if pid > 0 and pid not in written and pid in changes.lines
    }
    broken |= {
        pid: q.keeping() if pid in before else q for pid, q in changes.broken.items()
    }
    return Folded(
        Config(tuple(zones), config.latency, parked, broken),
        _merged(health, changes.health, before, written, gone),
        frozenset(dirty),
    )


def _merged(
    health: Mapping[int, Health],
    updates: Mapping[int, Health],
    before: Mapping[int, Profile],
    written: Mapping[int, tuple[int, Profile]],
    gone: set[int] | frozenset[int],
) -> Mapping[int, Health]:
    """The health map with the transitions applied and the endpoints that no
    longer exist (their rows went with them) dropped."""
    removed = {e.id for pid in gone for e in before[pid].endpoints}
    for pid, (_, profile) in written.items():
        if pid in before:
            kept = {e.id for e in profile.endpoints}
            removed |= {e.id for e in before[pid].endpoints if e.id not in kept}
    if not updates and not removed:
        return health
    merged = {**health, **updates}
    for endpoint_id in removed:
        merged.pop(endpoint_id, None)
    return merged
