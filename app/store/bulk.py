"""A whole import in one transaction: every step, one validation of the result,
one new generation. Any problem rolls everything back."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from app.domain import validation
from app.domain.model import ChangeAction, ChangeKind, Profile, Zone
from app.domain.validation import Invalid
from app.store.base import NotFound, Step
from app.store.latency import replace_rows
from app.store.mapping import (
    fill_endpoint_row,
    fill_profile_row,
    fill_zone_row,
    zone_from_row,
)
from app.store.parking import repark
from app.store.rows import read_profile, reconcile_endpoints, zone_row
from app.store.sessions import Sessions
from app.store.tables import EndpointRow, ProfileRow, ZoneRow


class _Loaded:
    """The zones an import has read, each once for the whole transaction (a
    step reading its zone again would make a 10,000-profile import quadratic),
    with their profile rows by name."""

    def __init__(self) -> None:
        self.zones: dict[str, ZoneRow] = {}
        self.profiles: dict[str, dict[str, ProfileRow]] = {}

    def zone(self, name: str) -> Zone:
        """The zone as the import has left it so far."""
        rows = sorted(self.profiles[name].values(), key=lambda p: p.id)
        names_by_id = {p.id: p.name for p in rows}
        header = zone_from_row(self.zones[name])
        return replace(
            header, profiles=tuple(read_profile(p, names_by_id) for p in rows)
        )


class _IdsByName(Mapping[str, int]):
    """A zone's profile ids by name, read from its rows as they are now."""

    def __init__(self, rows: dict[str, ProfileRow]) -> None:
        self._rows = rows

    def __getitem__(self, name: str) -> int:
        return self._rows[name].id

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class Imports:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def apply_steps(self, steps: Sequence[Step], *, actor: str) -> None:
        """Apply an import plan in order; the zones it touched are validated as
        they end up, not step by step, so a file may swap things around."""
        touched: set[str] = set()
        loaded = _Loaded()
        async with self._sessions.write() as session:
            for step in steps:
                touched.add(step.zone)
                before = await self._apply_step(session, step, loaded)
                await session.flush()
                resource = step.zone + (f"/{step.name}" if step.name else "")
                self._sessions.audit(
                    session,
                    actor,
                    f"import.{step.kind}.{step.action}",
                    resource or "latency",
                    before,
                    step.after,
                )
            problems: list[validation.Problem] = []
            for name in sorted(touched - {""}):
                try:
                    await self._loaded_zone(session, name, loaded)
                except NotFound:
                    continue  # deleted by the import
                problems += _problems_of(loaded.zone(name))
            if problems:
                raise Invalid(problems)
            if steps:
                generation = await self._sessions.bump(session)
                await session.execute(
                    update(ProfileRow)
                    .where(
                        ProfileRow.zone_id.in_(
                            select(ZoneRow.id).where(ZoneRow.name.in_(touched))
                        )
                    )
                    .values(revision=generation)
                )

    async def _loaded_zone(
        self, session: AsyncSession, name: str, loaded: _Loaded
    ) -> ZoneRow:
        row = loaded.zones.get(name)
        if row is None:
            row = await zone_row(session, name, lock=True, tree=True)
            loaded.zones[name] = row
            loaded.profiles[name] = {p.name: p for p in row.profiles}
        return row

    async def _apply_step(
        self, session: AsyncSession, step: Step, loaded: _Loaded
    ) -> object:
        """Apply one step; returns what it replaced or removed, for the audit."""
        if step.kind is ChangeKind.LATENCY:
            rows = step.after if isinstance(step.after, tuple) else ()
            return list(await replace_rows(session, rows))
        if step.kind is ChangeKind.ZONE:
            return await self._zone_step(session, step, loaded)
        return await self._profile_step(session, step, loaded)

    async def _zone_step(
        self, session: AsyncSession, step: Step, loaded: _Loaded
    ) -> Zone | None:
        if step.action is ChangeAction.CREATE and isinstance(step.after, Zone):
            session.add(fill_zone_row(ZoneRow(), step.after))
            return None
        row = await self._loaded_zone(session, step.zone, loaded)
        before = zone_from_row(row)
        if step.action is ChangeAction.DELETE:
            # Profile steps leave the zone's ORM collection alone (keeping it in
            # step would cost a pass over it per flush); give it the rows now.
            profiles = list(loaded.profiles[step.zone].values())
            set_committed_value(row, "profiles", profiles)
            await session.delete(row)
            del loaded.zones[step.zone], loaded.profiles[step.zone]
        elif isinstance(step.after, Zone):
            fill_zone_row(row, step.after)
        return before

    async def _profile_step(
        self, session: AsyncSession, step: Step, loaded: _Loaded
    ) -> Profile | None:
        zone_found = await self._loaded_zone(session, step.zone, loaded)
        by_name = loaded.profiles[step.zone]  # zone_found.profiles is left as read
        ids = _IdsByName(by_name)
        if step.action is ChangeAction.CREATE and isinstance(step.after, Profile):
            row = fill_profile_row(ProfileRow(zone_id=zone_found.id), step.after)
            row.endpoints = [
                fill_endpoint_row(EndpointRow(), e, ids) for e in step.after.endpoints
            ]
            session.add(row)
            await session.flush()
            by_name[row.name] = row
            await repark(session, row, self._sessions.clock())
            return None
        found = by_name.get(step.name or "")
        if found is None:
            raise NotFound(f"profile {step.name!r} does not exist in zone {step.zone}")
        row = found
        before = read_profile(row, {p.id: n for n, p in by_name.items()})
        if step.action is ChangeAction.DELETE:
            del by_name[row.name]
            await session.delete(row)
        elif isinstance(step.after, Profile):
            del by_name[row.name]
            fill_profile_row(row, step.after)
            by_name[row.name] = row
            await reconcile_endpoints(session, row, step.after, ids)
            await repark(session, row, self._sessions.clock())
        return before


def _problems_of(zone: Zone) -> list[validation.Problem]:
    """Every rule, with the profile named in the field so the line is useful."""
    problems = [
        validation.Problem(f"{p.name}: {problem.field}", problem.message)
        for p in zone.profiles
        for problem in validation.profile_problems(p, zone.name)
    ]
    return problems + validation.header_problems(zone) + validation.zone_problems(zone)
