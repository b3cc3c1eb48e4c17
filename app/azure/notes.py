"""Collect what a conversion could not carry over, in words; maps nothing itself."""

from __future__ import annotations

import json
from typing import Any

# Fields that say where a resource is, not what it does: read past in silence.
IDENTITY = frozenset(
    {
        "id",
        "name",
        "type",
        "location",
        "resourceGroup",
        "apiVersion",
        "dependsOn",
        "comments",
        "condition",
        "etag",
        "systemData",
        "properties",
        "resources",
    }
)


def _empty(value: Any) -> bool:
    return value is None or value in ("", [], {})


class Notes:
    """What could not be carried over, in words, naming the profile, endpoint
    and field (nothing is dropped silently), in the order it was found; and the
    nested children named, checked against the converted profiles last."""

    def __init__(self, unmapped: list[str]) -> None:
        self.unmapped = unmapped
        self.children: list[tuple[str, str]] = []  # (the endpoint, its child)

    def note(self, where: str, message: str) -> None:
        self.unmapped.append(f"{where}: {message}")

    def unknown(self, f: dict[str, Any], known: frozenset[str], where: str) -> None:
        """A note for each field with a value that no mapping reads."""
        for key, value in f.items():
            if key not in known and not _empty(value):
                self.note(where, f"{key} {json.dumps(value)} is not mapped")

    def nests(self, where: str, child: str) -> None:
        self.children.append((where, child))

    def note_absent_children(self, converted: set[str]) -> None:
        for where, child in self.children:
            if child not in converted:
                self.note(
                    where,
                    f"nests profile {child!r}, which is not in this input: it must "
                    "exist in the zone (convert and import it too)",
                )
