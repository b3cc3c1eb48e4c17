"""A whole import in one transaction: every step, one validation of the result,
one new generation. Any problem rolls everything back."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.domain import validation
from app.domain.model import Profile, Zone
from app.store.base import Invalid, NotFound, Step
from app.store.mapping import (
    fill_endpoint_row,
    fill_profile_row,
    fill_zone_row,
    zone_from_row,
)
from app.store.parking import repark
from app.store.rows import RowAccess
from app.store.tables import EndpointRow, LatencyRow, ProfileRow, ZoneRow


class BulkApply(RowAccess):
    async def apply_steps(self, steps: Sequence[Step], *, actor: str) -> None:
        """Apply an import plan in order; the zones it touched are validated as
        they end up, not step by step, so a file may swap things around."""
        touched: set[str] = set()
        async with self._write() as session:
            for step in steps:
                touched.add(step.zone)
                await self._apply_step(session, step)
                await session.flush()
                resource = step.zone + (f"/{step.name}" if step.name else "")
                self._audit(
                    session,
                    actor,
                    f"import.{step.kind}.{step.action}",
                    resource or "latency",
                    None,
                    step.after,
                )
            problems: list[validation.Problem] = []
            for name in sorted(touched - {""}):
                try:
                    zone = zone_from_row(await self._zone_row(session, name, tree=True))
                except NotFound:
                    continue  # deleted by the import
                problems += _problems_of(zone)
            if problems:
                raise Invalid(problems)
            if steps:
                generation = await self._bump(session)
                await session.execute(
                    update(ProfileRow)
                    .where(
                        ProfileRow.zone_id.in_(
                            select(ZoneRow.id).where(ZoneRow.name.in_(touched))
                        )
                    )
                    .values(revision=generation)
                )

    async def _apply_step(self, session: AsyncSession, step: Step) -> None:
        if step.kind == "latency":
            await session.execute(delete(LatencyRow))
            rows = step.after if isinstance(step.after, tuple) else ()
            session.add_all(LatencyRow(network=n, rtt_ms=dict(rtt)) for n, rtt in rows)
        elif step.kind == "zone":
            await self._zone_step(session, step)
        else:
            await self._profile_step(session, step)

    async def _zone_step(self, session: AsyncSession, step: Step) -> None:
        if step.action == "create" and isinstance(step.after, Zone):
            session.add(fill_zone_row(ZoneRow(), step.after))
            return
        row = await self._zone_row(session, step.zone, lock=True, tree=True)
        if step.action == "delete":
            await session.delete(row)
        elif isinstance(step.after, Zone):
            fill_zone_row(row, step.after)

    async def _profile_step(self, session: AsyncSession, step: Step) -> None:
        zone_row = await self._zone_row(session, step.zone, lock=True, tree=True)
        ids = {p.name: p.id for p in zone_row.profiles}
        if step.action == "create" and isinstance(step.after, Profile):
            row = fill_profile_row(ProfileRow(), step.after)
            row.endpoints = [
                fill_endpoint_row(EndpointRow(), e, ids) for e in step.after.endpoints
            ]
            zone_row.profiles.append(row)
            await session.flush()
            await repark(session, row, self._clock())
            return
        row = self._tree_profile_row(zone_row, step.name or "")
        if step.action == "delete":
            zone_row.profiles.remove(row)
            await session.delete(row)
        elif isinstance(step.after, Profile):
            fill_profile_row(row, step.after)
            await self._reconcile_endpoints(session, row, step.after, ids)
            await repark(session, row, self._clock())


def _problems_of(zone: Zone) -> list[validation.Problem]:
    """Every rule, with the profile named in the field so the line is useful."""
    problems = [
        validation.Problem(f"{p.name}: {problem.field}", problem.message)
        for p in zone.profiles
        for problem in validation.profile_problems(p)
    ]
    return problems + validation.zone_problems(zone)
