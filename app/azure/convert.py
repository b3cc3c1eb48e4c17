"""Azure Traffic Manager JSON → a tmdns document and its unmapped lines; no I/O."""

from __future__ import annotations

import json
from typing import Any

from app.azure.errors import AzureError
from app.azure.notes import Notes
from app.azure.profile import profile_body
from app.azure.sources import find_sources
from app.domain import names
from app.transfer import VERSION


def from_azure(text: str, zone: str) -> tuple[dict[str, Any], list[str]]:
    """The Traffic Manager profiles in `text` as a document for `zone` (an
    existing zone: the entry has no `ns`), and the lines of what was not
    mapped. Profiles are named by their Azure resource name, so a nested
    endpoint's child (the last segment of its targetResourceId) finds them."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AzureError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    try:
        zone_name = names.absolute(zone)
    except names.BadName as exc:
        raise AzureError(str(exc)) from None
    unmapped: list[str] = []
    sources = find_sources(data, unmapped)
    if not sources:
        raise AzureError(
            "no Traffic Manager profile found: give the output of `az network "
            "traffic-manager profile show` or an ARM template with a "
            "Microsoft.Network/trafficManagerProfiles resource"
        )
    notes = Notes(unmapped)
    profiles = [profile_body(s, notes) for s in sources]
    notes.note_absent_children({str(p["name"]) for p in profiles})
    document = {
        "version": VERSION,
        "zones": [
            {
                "name": zone_name,
                "profiles": sorted(profiles, key=lambda p: str(p["name"])),
            }
        ],
    }
    return document, unmapped
