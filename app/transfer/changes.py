"""Diff two Configs into ordered Changes and apply them in memory; never stores."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from app.domain import names
from app.domain.model import (
    ChangeAction,
    ChangeKind,
    Config,
    EndpointKind,
    LatencyRows,
    Profile,
    Zone,
)
from app.domain.validation import header_problems, profile_problems, zone_problems
from app.transfer.document import profile_doc, zone_doc
from app.transfer.errors import TransferError
from app.transfer.model import is_reference


@dataclass(frozen=True, slots=True)
class Change:
    """One step of an import, in the order the steps must be applied.

    zone: create carries the zone's own fields (no profiles: each comes as its
    own profile create); update carries the current zone (id, profiles) with
    the file's ns, soa_email, negative_ttl and glue; delete removes the zone
    with its profiles. profile: `after` of an update keeps the current
    profile's id and its endpoints' ids (matched by name), so health and
    history stay with the endpoint. latency: the whole table (`zone` is "").
    """

    action: ChangeAction
    kind: ChangeKind
    zone: str
    name: str | None
    before: Zone | Profile | LatencyRows | None
    after: Zone | Profile | LatencyRows | None


def plan(current: Config, desired: Config, prune: bool) -> list[Change]:
    """What turns `current` into `desired`: zones and profiles matched by name,
    updated only when their documents differ. Without `prune` nothing is
    deleted; with it, zones and profiles absent from `desired` are, and an
    empty latency table in `desired` empties the current one.

    Order: zones created and updated; profiles created (nested children before
    their parents) and updated (children first); profiles deleted (parents
    first); zones deleted; the latency table. Raises TransferError for a zone
    entry without `ns` whose zone does not exist.
    """
    have = {z.name: z for z in current.zones}
    want = {z.name: z for z in desired.zones}
    _require_referenced(want, have)
    zones: list[Change] = []
    creates: list[Change] = []
    updates: list[Change] = []
    deletes: list[Change] = []
    for name in sorted(want):
        target, now = want[name], have.get(name)
        zones += _zone_change(name, target, now)
        made, changed = _profile_upserts(name, target, now)
        creates += made
        updates += changed
        if prune and now is not None:
            deletes += _profile_deletes(name, target, now)
    dropped = [
        Change(ChangeAction.DELETE, ChangeKind.ZONE, n, None, have[n], None)
        for n in sorted(have)
        if prune and n not in want
    ]
    return (
        zones
        + creates
        + updates
        + deletes
        + dropped
        + _latency_change(current.latency, desired.latency, prune)
    )


def _require_referenced(want: dict[str, Zone], have: dict[str, Zone]) -> None:
    """A zone entry without `ns` must name a zone that exists."""
    missing = sorted(n for n, z in want.items() if is_reference(z) and n not in have)
    if missing:
        raise TransferError(
            [f"zone {n} does not exist: give its 'ns' to create it" for n in missing]
        )


def _zone_change(name: str, target: Zone, now: Zone | None) -> list[Change]:
    """The zone's create, or its update when its own fields differ."""
    if now is None:
        return [
            Change(
                ChangeAction.CREATE, ChangeKind.ZONE, name, None, None, _bare(target)
            )
        ]
    if not is_reference(target) and (
        zone_doc(now) != zone_doc(target) or now.rrsets != target.rrsets
    ):
        after = replace(
            now,
            ns=target.ns,
            soa_email=target.soa_email,
            negative_ttl=target.negative_ttl,
            glue=target.glue,
            rrsets=target.rrsets,
        )
        return [Change(ChangeAction.UPDATE, ChangeKind.ZONE, name, None, now, after)]
    return []


def _profile_upserts(
    name: str, target: Zone, now: Zone | None
) -> tuple[list[Change], list[Change]]:
    """The zone's profile creates and updates, nested children first."""
    creates: list[Change] = []
    updates: list[Change] = []
    existing = {p.name: p for p in now.profiles} if now else {}
    for p in _children_first(target.profiles):
        old = existing.get(p.name)
        if old is None:
            creates.append(
                Change(ChangeAction.CREATE, ChangeKind.PROFILE, name, p.name, None, p)
            )
        elif profile_doc(old, name) != profile_doc(p, name):
            updates.append(
                Change(
                    ChangeAction.UPDATE,
                    ChangeKind.PROFILE,
                    name,
                    p.name,
                    old,
                    _keep_ids(p, old),
                )
            )
    return creates, updates


def _profile_deletes(name: str, target: Zone, now: Zone) -> list[Change]:
    """The zone's profiles absent from `target`, parents first."""
    wanted = {p.name: p for p in target.profiles}
    gone = [p for p in now.profiles if p.name not in wanted]
    return [
        Change(ChangeAction.DELETE, ChangeKind.PROFILE, name, p.name, p, None)
        for p in reversed(_children_first(gone))
    ]


def _bare(zone: Zone) -> Zone:
    return replace(zone, profiles=())


def _keep_ids(profile: Profile, current: Profile) -> Profile:
    ids = {e.name: e.id for e in current.endpoints}
    return replace(
        profile,
        id=current.id,
        endpoints=tuple(replace(e, id=ids.get(e.name, 0)) for e in profile.endpoints),
    )


def _children_first(profiles: Iterable[Profile]) -> list[Profile]:
    """Profiles by name, each after the profiles (of this list) it nests."""
    by_name = {p.name: p for p in sorted(profiles, key=lambda p: p.name)}
    ordered: list[Profile] = []
    state: dict[str, bool] = {}  # False: being visited, True: placed

    def visit(name: str) -> None:
        if name in state:
            return  # placed, or a cycle (the store refuses it)
        state[name] = False
        for e in by_name[name].endpoints:
            if e.kind is EndpointKind.NESTED and e.child in by_name:
                visit(e.child)
        state[name] = True
        ordered.append(by_name[name])

    for name in by_name:
        visit(name)
    return ordered


def _latency_change(
    before: LatencyRows, after: LatencyRows, prune: bool
) -> list[Change]:
    if (not after and not prune) or _latency_doc(before) == _latency_doc(after):
        return []
    action = (
        ChangeAction.CREATE
        if not before
        else ChangeAction.DELETE
        if not after
        else ChangeAction.UPDATE
    )
    return [Change(action, ChangeKind.LATENCY, "", None, before or None, after or None)]


def _latency_doc(rows: LatencyRows) -> dict[str, dict[str, float]]:
    return {network: dict(sorted(rtt.items())) for network, rtt in rows}


# --- the result of a plan, for --dry-run ----------------------------------------


def apply_plan(current: Config, changes: Sequence[Change]) -> Config:
    """The configuration `changes` lead to, computed without a store: a dry run
    checks it with config_problems() as the store's transaction would."""
    zones = {z.name: z for z in current.zones}
    latency = current.latency
    for c in changes:
        if c.kind is ChangeKind.LATENCY:
            latency = c.after if isinstance(c.after, tuple) else ()
        elif c.kind is ChangeKind.ZONE:
            if c.action is ChangeAction.DELETE:
                zones.pop(c.zone, None)
            elif isinstance(c.after, Zone):
                kept = zones[c.zone].profiles if c.zone in zones else ()
                zones[c.zone] = replace(c.after, profiles=kept)
        else:
            zone = zones[c.zone]
            profiles = [p for p in zone.profiles if p.name != c.name]
            if isinstance(c.after, Profile):
                listed = [p.name for p in zone.profiles]
                at = listed.index(c.after.name) if c.after.name in listed else None
                profiles.insert(len(profiles) if at is None else at, c.after)
            zones[c.zone] = replace(zone, profiles=tuple(profiles))
    return Config(zones=tuple(zones.values()), latency=latency, parked=current.parked)


def config_problems(config: Config) -> list[str]:
    """Every cross-object rule the store enforces, as `zone: profile: field:
    message` lines (empty when the configuration is acceptable)."""
    found: list[str] = []
    for zone in config.zones:
        for profile in zone.profiles:
            where = names.join(profile.name, zone.name)
            found += [
                f"{where}: {p.field}: {p.message}"
                for p in profile_problems(profile, zone.name)
            ]
        found += [
            f"{zone.name}: {p.message}"
            for p in header_problems(zone) + zone_problems(zone)
        ]
    return found
