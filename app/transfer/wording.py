"""Changes → one human-readable line each, for the CLI; computes no changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.domain import names
from app.domain.model import ChangeAction, ChangeKind, Profile, Zone
from app.transfer.changes import Change
from app.transfer.document import profile_doc, zone_doc


def describe(changes: Sequence[Change]) -> list[str]:
    """One line per change: `+ profile app.tm.example.`, `~ profile
    web.tm.example. (ttl 60 → 30, endpoints ~b +c)`, `- zone old.example.`."""
    return [_describe(c) for c in changes]


_SIGNS = {ChangeAction.CREATE: "+", ChangeAction.UPDATE: "~", ChangeAction.DELETE: "-"}


def _describe(change: Change) -> str:
    sign = _SIGNS[change.action]
    if change.kind is ChangeKind.LATENCY:
        before, after = change.before, change.after
        counts = [len(rows) for rows in (before, after) if isinstance(rows, tuple)]
        return f"{sign} latency ({' → '.join(map(str, counts))} networks)"
    if change.kind is ChangeKind.ZONE:
        line = f"{sign} zone {change.zone}"
        if isinstance(change.before, Zone) and isinstance(change.after, Zone):
            details = _differences(zone_doc(change.before), zone_doc(change.after))
            return f"{line} ({', '.join(details)})"
        if change.action is ChangeAction.DELETE and isinstance(change.before, Zone):
            count = len(change.before.profiles)
            if count:
                return f"{line} (with its {count} profile{'s' if count > 1 else ''})"
        return line
    line = f"{sign} profile {names.join(change.name or names.APEX, change.zone)}"
    if isinstance(change.before, Profile) and isinstance(change.after, Profile):
        details = _differences(
            profile_doc(change.before, change.zone),
            profile_doc(change.after, change.zone),
        )
        return f"{line} ({', '.join(details)})"
    return line


def _differences(
    before: dict[str, Any], after: dict[str, Any], prefix: str = ""
) -> list[str]:
    """`ttl 60 → 30` for a scalar, `monitor.interval 30 → 10` inside an object,
    `endpoints +c ~b -a` for endpoints by name, and the field's name otherwise."""
    found: list[str] = []
    for key in dict.fromkeys([*before, *after]):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            found += _differences(old, new, f"{prefix}{key}.")
        elif key == "endpoints" and isinstance(old, list) and isinstance(new, list):
            found.append(f"{prefix}{key}" + _endpoint_changes(old, new))
        elif not isinstance(old, dict | list) and not isinstance(new, dict | list):
            found.append(f"{prefix}{key} {_show(old)} → {_show(new)}")
        else:
            found.append(f"{prefix}{key}")
    return found


def _endpoint_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    old = {e["name"]: e for e in before}
    new = {e["name"]: e for e in after}
    marks = [f"+{n}" for n in new if n not in old]
    marks += [f"~{n}" for n in new if n in old and old[n] != new[n]]
    marks += [f"-{n}" for n in old if n not in new]
    return " " + " ".join(marks) if marks else " reordered"


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
