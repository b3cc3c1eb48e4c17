"""Overrides that start, change, end or run out between two versions of the
configuration: what the `override` events tell (app.store.events), so an
operator watching the stream or a webhook sees a drain begin and end, not
only "profile.update"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from app.domain.model import Override, Profile, Zone


class OverrideChange(StrEnum):
    START = "start"
    CHANGE = "change"  # another state, reason or expiry
    END = "end"  # removed by a change
    EXPIRE = "expire"  # its `until` passed


@dataclass(frozen=True, slots=True)
class OverrideEvent:
    zone: str
    profile: str
    endpoint: str
    change: OverrideChange
    override: Override  # the one now in force; for END and EXPIRE, the one gone


def override_changes(
    zone: str, before: Any, after: Any, now: float
) -> list[OverrideEvent]:
    """The override events between `before` and `after` (each a Profile, a
    Zone, or anything else — None, latency rows — which holds none)."""
    old, new = _overrides(before), _overrides(after)
    found: list[OverrideEvent] = []
    for key, now_in_force in new.items():
        was = old.get(key)
        if was != now_in_force:
            change = OverrideChange.START if was is None else OverrideChange.CHANGE
            found.append(OverrideEvent(zone, *key, change, now_in_force))
    for key, was in old.items():
        if key not in new:
            change = OverrideChange.EXPIRE if _ran_out(was, now) else OverrideChange.END
            found.append(OverrideEvent(zone, *key, change, was))
    found.sort(key=lambda e: (e.profile, e.endpoint))
    return found


def expired(profile: Profile, now: float) -> Profile | None:
    """`profile` without the overrides whose `until` has passed; None when
    none has."""
    if not any(_ran_out(e.override, now) for e in profile.endpoints):
        return None
    endpoints = tuple(
        replace(e, override=None) if _ran_out(e.override, now) else e
        for e in profile.endpoints
    )
    return replace(profile, endpoints=endpoints)


def _ran_out(override: Override | None, now: float) -> bool:
    return override is not None and override.until is not None and override.until <= now


def _overrides(held: Any) -> dict[tuple[str, str], Override]:
    profiles: tuple[Profile, ...] = ()
    if isinstance(held, Profile):
        profiles = (held,)
    elif isinstance(held, Zone):
        profiles = held.profiles
    return {
        (p.name, e.name): e.override
        for p in profiles
        for e in p.endpoints
        if e.override is not None
    }
