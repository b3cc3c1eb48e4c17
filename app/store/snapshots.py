"""What DNS instances read: the whole configuration with its health, or what
changed since a generation, both in one read transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain.changes import Changes, ProfileLine
from app.domain.model import Config, Health, Quarantined, Zone
from app.store.latency import latency_rows
from app.store.loading import ConfigReader
from app.store.mapping import zone_from_row
from app.store.sessions import Sessions
from app.store.tables import EndpointHealthRow, MetaRow, ProfileRow, ZoneRow


class Snapshots:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def load_all(self) -> tuple[Config, Mapping[int, Health]]:
        async with self._sessions.read() as session:
            reader = ConfigReader(session)
            lines = await reader.index()
            zones, bad_zones = await _zone_headers(session)
            profiles = await reader.profiles(None, _names(lines))
            health = await reader.health()
            latency = await latency_rows(session)
        config = Config(
            zones=tuple(
                replace(z, profiles=tuple(profiles.get(z.id, ()))) for z in zones
            ),
            latency=latency,
            parked={i: p.parked for i, p in lines.items() if p.parked is not None},
            broken=_broken(zones, bad_zones, reader),
        )
        return config, health

    async def load_changes(self, since: int) -> Changes:
        """What generations after `since` wrote: the generation is read first, so
        everything up to it is included (later writes may be too; folding them
        in twice is harmless)."""
        async with self._sessions.read() as session:
            generation = await session.scalar(select(MetaRow.generation))
            reader = ConfigReader(session)
            lines = await reader.index()
            zones, bad_zones = await _zone_headers(session)
            written = await reader.profiles(ProfileRow.revision > since, _names(lines))
            health = await reader.health(EndpointHealthRow.revision > since)
            latency = await latency_rows(session)
        return Changes(
            since=since,
            generation=int(generation or 0),
            zones=zones,
            lines=lines,
            profiles=tuple((zone_id, p) for zone_id, ps in written.items() for p in ps),
            health=health,
            latency=latency,
            broken=_broken(zones, bad_zones, reader),
        )


async def _zone_headers(
    session: AsyncSession,
) -> tuple[tuple[Zone, ...], dict[int, Quarantined]]:
    """Every zone that reads; one that does not is quarantined (by minus its
    id, beside the profiles) with its profiles, not the whole read."""
    zones: list[Zone] = []
    bad: dict[int, Quarantined] = {}
    for row in await session.scalars(select(ZoneRow).order_by(ZoneRow.id)):
        try:
            zones.append(zone_from_row(row))
        except Exception as exc:
            bad[-row.id] = Quarantined(-row.id, row.name, "", str(exc))
    return tuple(zones), bad


def _broken(
    zones: tuple[Zone, ...], bad_zones: dict[int, Quarantined], reader: ConfigReader
) -> dict[int, Quarantined]:
    """What could not be read, by profile id (zones by minus their id)."""
    names = {z.id: z.name for z in zones}
    broken = dict(bad_zones)
    for profile_id, (zone_id, name, reason) in reader.broken.items():
        if zone_id in names:
            broken[profile_id] = Quarantined(profile_id, names[zone_id], name, reason)
    return broken


def _names(lines: Mapping[int, ProfileLine]) -> dict[int, str]:
    """Profile names by id, to name nested children."""
    return {profile_id: line.name for profile_id, line in lines.items()}
