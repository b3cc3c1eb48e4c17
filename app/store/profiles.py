"""Profiles with their endpoints: each write validates the profile and the
zone-wide rules with it in place before it commits, and keeps a parking
profile's endpoint in use current."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from app.domain.model import Profile
from app.domain.overrides import expired
from app.store.base import Conflict, ProfileChange
from app.store.mapping import (
    UnreadableRow,
    fill_endpoint_row,
    fill_profile_row,
    profile_from_row,
)
from app.store.parking import repark
from app.store.rows import (
    profile_names,
    profile_row,
    read_profile,
    reconcile_endpoints,
    validate_profile,
    zone_row,
)
from app.store.sessions import Sessions
from app.store.tables import EndpointRow, ProfileRow

# Who the audit log says removed an override that ran out.
EXPIRY_ACTOR = "tmdns"


class Profiles:
    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def get_profile(self, zone: str, name: str) -> Profile:
        async with self._sessions.read() as session:
            zone_found = await zone_row(session, zone)
            row = await profile_row(session, zone_found, name)
            return read_profile(row, await profile_names(session, zone_found))

    async def create_profile(
        self, zone: str, profile: Profile, *, actor: str
    ) -> Profile:
        sessions = self._sessions
        async with sessions.write() as session:
            zone_found = await zone_row(session, zone)
            names_by_id = await profile_names(session, zone_found)
            if profile.name in names_by_id.values():
                raise Conflict(f"profile {profile.name!r} already exists in {zone}")
            await validate_profile(session, zone_found, names_by_id, profile)
            ids = {name: profile_id for profile_id, name in names_by_id.items()}
            row = fill_profile_row(ProfileRow(zone_id=zone_found.id), profile)
            row.endpoints = [
                fill_endpoint_row(EndpointRow(), e, ids) for e in profile.endpoints
            ]
            session.add(row)
            await session.flush()
            await repark(session, row, sessions.clock())
            saved = profile_from_row(row, names_by_id)
            sessions.audit(
                session, actor, "profile.create", _ref(zone, profile.name), None, saved
            )
            row.revision = await sessions.bump(session)
        return saved

    async def update_profile(
        self, zone: str, name: str, change: ProfileChange, *, actor: str, action: str
    ) -> Profile:
        """Apply `change` to the current profile inside the transaction.

        The change runs against the row as locked by this transaction, so two
        concurrent endpoint edits on one profile cannot overwrite each other.
        """
        sessions = self._sessions
        async with sessions.write() as session:
            zone_found = await zone_row(session, zone, lock=True)
            row = await profile_row(session, zone_found, name)
            names_by_id = await profile_names(session, zone_found)
            before = read_profile(row, names_by_id)
            after = change(before)
            if after.name != name and after.name in names_by_id.values():
                raise Conflict(f"profile {after.name!r} already exists in {zone}")
            await validate_profile(session, zone_found, names_by_id, after, row.id)
            fill_profile_row(row, after)
            ids = {n: profile_id for profile_id, n in names_by_id.items()}
            await reconcile_endpoints(session, row, after, ids)
            await repark(session, row, sessions.clock())
            saved = profile_from_row(row, names_by_id)
            sessions.audit(session, actor, action, _ref(zone, name), before, saved)
            row.revision = await sessions.bump(session)
        return saved

    async def expire_overrides(self, zone: str, name: str, now: float) -> bool:
        """Remove the profile's overrides whose `until` has passed, as a change
        of its own (audited by EXPIRY_ACTOR, told as `override` events);
        False when none had (another process came first, say): then nothing
        is written."""

        def change(profile: Profile) -> Profile:
            cleared = expired(profile, now)
            if cleared is None:
                raise _NothingExpired
            return cleared

        try:
            await self.update_profile(
                zone, name, change, actor=EXPIRY_ACTOR, action="override.expire"
            )
        except _NothingExpired:
            return False
        return True

    async def delete_profile(
        self,
        zone: str,
        name: str,
        *,
        actor: str,
        guard: Callable[[Profile], None] | None = None,
    ) -> None:
        """Refused while another profile nests this one: DNS would lose a branch.
        A profile whose rows do not read can always be deleted."""
        sessions = self._sessions
        async with sessions.write() as session:
            zone_found = await zone_row(session, zone, lock=True)
            row = await profile_row(session, zone_found, name)
            names_by_id = await profile_names(session, zone_found)
            try:
                before: Profile | None = profile_from_row(row, names_by_id)
            except UnreadableRow:
                before = None  # no document to match or keep: deleting is the way out
            if guard is not None and before is not None:
                guard(before)
            parents = list(
                await session.scalars(
                    select(ProfileRow.name)
                    .join(EndpointRow, EndpointRow.profile_id == ProfileRow.id)
                    .where(EndpointRow.child_id == row.id)
                    .distinct()
                    .order_by(ProfileRow.name)
                )
            )
            if parents:
                raise Conflict(
                    f"profile {name!r} is nested in {', '.join(map(repr, parents))}: "
                    "remove those nested endpoints first"
                )
            sessions.audit(
                session, actor, "profile.delete", _ref(zone, name), before, None
            )
            await session.delete(row)
            await sessions.bump(session)


class _NothingExpired(Exception):
    """Rolls back an expiry that found nothing to remove."""


def _ref(zone: str, profile: str) -> str:
    return f"{zone}/{profile}"
