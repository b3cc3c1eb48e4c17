"""Whom an Azure endpoint serves → geo codes, subnets, location; no other fields."""

from __future__ import annotations

import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.azure.notes import Notes
from app.domain.regions import region_coordinates
from app.schemas import GeoCode, Subnet

# Azure's geographic codes that are not tmdns codes but have an equivalent:
# Azure's "Australia / Pacific" is the Oceania of GeoIP continents.
_GEO_CODES = {"GEO-AP": "GEO-OC"}
_GEO_HINTS = {
    "GEO-ME": "Azure's Middle East region has no tmdns code: list its countries",
}
_geo_code: TypeAdapter[str] = TypeAdapter(GeoCode)
_subnet: TypeAdapter[str] = TypeAdapter(Subnet)


def add_placement(
    e: dict[str, Any], method: str, body: dict[str, Any], where: str, notes: Notes
) -> None:
    """Who the endpoint serves: geographic codes, subnets and location."""
    geo = _geo(e.get("geoMapping") or [], where, notes)
    if geo:
        body["geo"] = geo
    elif method == "geographic":
        notes.note(where, "has no geographic code tmdns knows: it answers nobody")
    subnets = _subnets(e.get("subnets") or [], where, notes)
    if subnets:
        body["subnets"] = subnets
    location = e.get("endpointLocation")
    if location:
        region = "azure:" + re.sub(r"[\s_-]", "", str(location).lower())
        if region_coordinates(region) is None:
            notes.note(where, f"endpointLocation {location!r} is not a known region")
        else:
            body["location"] = {"region": region}
    elif method == "performance":
        notes.note(where, "has no endpointLocation: give it a location")


def _geo(codes: list[Any], where: str, notes: Notes) -> list[str]:
    kept: list[str] = []
    for code in codes:
        text = str(code).strip().upper()
        try:
            kept.append(_geo_code.validate_python(_GEO_CODES.get(text, text)))
        except ValidationError:
            hint = _GEO_HINTS.get(text, "not a tmdns geographic code")
            notes.note(where, f"geoMapping {code!r}: {hint}")
    return kept


def _subnets(subnets: list[Any], where: str, notes: Notes) -> list[str]:
    kept: list[str] = []
    for s in subnets:
        first, last, scope = s.get("first"), s.get("last"), s.get("scope")
        if first and scope is not None:
            text = f"{first}/{scope}"
        elif first and last:
            text = f"{first}-{last}"
        elif first:
            text = f"{first}-{first}"
        else:
            notes.note(where, f"subnet {s} has no 'first' address")
            continue
        try:
            kept.append(_subnet.validate_python(text))
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            notes.note(where, f"subnets: {message}")
    return kept
