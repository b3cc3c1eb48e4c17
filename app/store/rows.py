"""Row lookups and rules shared by the store's writers: find a zone or profile
row, validate a candidate profile or zone, reconcile a profile's endpoint rows.
Plain functions of a session: the repositories call them, nothing inherits
them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from app.domain import validation
from app.domain.model import Profile, Zone
from app.domain.validation import Invalid
from app.store.base import Conflict, NotFound
from app.store.loading import ConfigReader
from app.store.mapping import (
    UnreadableRow,
    fill_endpoint_row,
    profile_from_row,
    zone_from_row,
)
from app.store.tables import EndpointRow, ProfileRow, ZoneRow

ZONE_TREE = selectinload(ZoneRow.profiles).selectinload(ProfileRow.endpoints)


async def zone_row(
    session: AsyncSession, name: str, *, lock: bool = False, tree: bool = False
) -> ZoneRow:
    """The zone's row, locked for the transaction when writing (SQLite has one
    writer, so there it needs no lock); with `tree` every profile and endpoint
    row too (whole-zone reads and imports only: at 10,000 profiles that is
    seconds)."""
    query = select(ZoneRow).where(ZoneRow.name == name)
    if tree:
        query = query.options(ZONE_TREE)
    if lock and session.get_bind().dialect.name != "sqlite":
        query = query.with_for_update(of=ZoneRow)
    row = await session.scalar(query)
    if row is None:
        raise NotFound(f"zone {name} does not exist")
    return row


async def profile_row(session: AsyncSession, zone: ZoneRow, name: str) -> ProfileRow:
    row = await session.scalar(
        select(ProfileRow)
        .where(ProfileRow.zone_id == zone.id, ProfileRow.name == name)
        .options(selectinload(ProfileRow.endpoints))
    )
    if row is None:
        raise NotFound(f"profile {name!r} does not exist in zone {zone.name}")
    return row


def read_profile(row: ProfileRow, names_by_id: Mapping[int, str]) -> Profile:
    """The profile a write starts from. One whose rows do not read (written
    around the API, or by a version with other rules) is refused by name with
    the field at fault and the way out, never as an internal error; DNS has it
    quarantined meanwhile."""
    try:
        return profile_from_row(row, names_by_id)
    except UnreadableRow as exc:
        raise Conflict(
            f"profile {row.name!r} cannot be read ({exc}): "
            "delete it and create it again",
            field="name",
        ) from None


def readable_profiles(
    rows: Sequence[ProfileRow], names_by_id: Mapping[int, str]
) -> tuple[Profile, ...]:
    """Those of `rows` that read, for what only looks at them (an audit)."""
    profiles = []
    for row in rows:
        try:
            profiles.append(profile_from_row(row, names_by_id))
        except UnreadableRow:
            continue
    return tuple(profiles)


async def profile_names(session: AsyncSession, zone: ZoneRow) -> dict[int, str]:
    """The zone's profile names by id, to name nested children."""
    rows = await session.execute(
        select(ProfileRow.id, ProfileRow.name).where(ProfileRow.zone_id == zone.id)
    )
    return {profile_id: name for profile_id, name in rows}


async def validate_profile(
    session: AsyncSession,
    zone: ZoneRow,
    names_by_id: Mapping[int, str],
    profile: Profile,
    replacing: int | None = None,
) -> None:
    """The profile's own rules, and the zone-wide ones with it in place,
    checked against the profiles that could collide with it."""
    problems = validation.profile_problems(profile, zone.name)
    if problems:
        raise Invalid(problems)  # before names that cannot exist are looked up
    neighbours = validation.neighbour_names(profile, zone.name)
    others = await ConfigReader(session).outline(
        zone.id, names_by_id, neighbours, skip=replacing
    )
    candidate = replace(zone_from_row(zone), profiles=(*others, profile))
    problems += validation.zone_problems(candidate)
    if problems:
        raise Invalid(problems)


async def validate_zone(session: AsyncSession, row: ZoneRow, zone: Zone) -> None:
    """A zone's own fields, and its new glue against the profiles that could
    own its names."""
    problems = validation.header_problems(zone)
    if problems:
        raise Invalid(problems)
    neighbours = validation.glue_neighbour_names(zone)
    if not neighbours:
        return
    names_by_id = await profile_names(session, row)
    others = await ConfigReader(session).outline(row.id, names_by_id, neighbours)
    problems = validation.zone_problems(replace(zone, profiles=others))
    if problems:
        raise Invalid(problems)


async def validate_rrsets(
    session: AsyncSession, row: ZoneRow, zone: Zone, name: str, delegation: bool
) -> None:
    """The zone's static rrsets as they would be, against the profiles that
    could own `name` (every profile for a `delegation`: it hides all below)."""
    names_by_id = await profile_names(session, row)
    neighbours = (
        set(names_by_id.values())
        if delegation
        else validation.rrset_neighbour_names(name, zone.name)
    )
    others = await ConfigReader(session).outline(row.id, names_by_id, neighbours)
    problems = validation.zone_problems(replace(zone, profiles=others))
    if problems:
        raise Invalid(problems)


async def reconcile_endpoints(
    session: AsyncSession, row: ProfileRow, after: Profile, ids: Mapping[str, int]
) -> None:
    """Delete, update, then insert: a reused name never trips the unique key."""
    keep = {e.id for e in after.endpoints if e.id}
    for gone in [e for e in row.endpoints if e.id not in keep]:
        row.endpoints.remove(gone)
        await session.delete(gone)
    await session.flush()
    existing = {e.id: e for e in row.endpoints}
    for endpoint in after.endpoints:
        if endpoint.id in existing:
            fill_endpoint_row(existing[endpoint.id], endpoint, ids)
        else:
            row.endpoints.append(fill_endpoint_row(EndpointRow(), endpoint, ids))
    await session.flush()
