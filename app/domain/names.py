"""Domain-name spelling: one canonical form for storage, lookup and responses.

Names are accepted with or without the trailing dot and in any letter case
(DESIGN §6); inside tmdns they are lowercase and absolute ("tm.example.").
"""

from __future__ import annotations

import re

APEX = "@"
# Letters, digits, hyphens inside, and underscores (SRV owner names). No "*":
# tmdns serves no wildcards, and a literal "*" label only confuses.
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
MAX_NAME_OCTETS = 255


class BadName(ValueError):
    """A name that DNS cannot carry (empty label, label over 63, name over 255)."""


def absolute(name: str) -> str:
    """Lowercase, absolute spelling of `name`; raises BadName if DNS cannot carry it."""
    text = name.strip().lower()
    if text in ("", "."):
        return "."
    text = text.rstrip(".") + "."
    labels = text[:-1].split(".")
    for label in labels:
        if not _LABEL.match(label):
            raise BadName(f"{name!r}: label {label!r} is not a valid DNS label")
    if len(text) + 1 > MAX_NAME_OCTETS:
        raise BadName(f"{name!r} is longer than {MAX_NAME_OCTETS} octets")
    return text


def relative(name: str, zone: str) -> str:
    """The profile-style name of `name` inside `zone`: a label path or "@" for the apex.

    A name that ends with the zone is taken as absolute (with or without its dot);
    a name with a trailing dot is absolute and must be inside the zone; anything
    else is relative to the zone, and must still fit in DNS once joined to it.
    """
    if name.strip() in (APEX, ""):
        return APEX
    full = absolute(name)
    if full == zone:
        return APEX
    if full.endswith("." + zone):
        return full[: -len(zone) - 1]
    if name.strip().endswith("."):
        raise BadName(f"{name!r} is not inside the zone {zone}")
    relative_part = full[:-1]
    joined = relative_part + "." + zone
    if len(joined) + 1 > MAX_NAME_OCTETS:
        raise BadName(
            f"{name!r} in {zone} is longer than {MAX_NAME_OCTETS} octets in all"
        )
    return relative_part


def join(relative_name: str, zone: str) -> str:
    """The absolute name of a zone-relative name."""
    return zone if relative_name == APEX else f"{relative_name}.{zone}"
