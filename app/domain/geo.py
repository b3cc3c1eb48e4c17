"""Geographic helpers: the code hierarchy and great-circle distance. Pure."""

from __future__ import annotations

import math

from app.domain.query import GeoFacts

WORLD = "WORLD"
CONTINENT_PREFIX = "GEO-"  # Azure's spelling: continent codes clash with countries
CONTINENTS = frozenset({"AF", "AN", "AS", "EU", "NA", "OC", "SA"})
EARTH_RADIUS_KM = 6371.0


def hierarchy(facts: GeoFacts | None) -> list[str]:
    """The client's codes from most to least specific, ending with WORLD:
    `["US-CA", "US", "GEO-NA", "WORLD"]`."""
    codes: list[str] = []
    if facts is not None:
        if facts.subdivision:
            codes.append(facts.subdivision)
        if facts.country:
            codes.append(facts.country)
        if facts.continent:
            codes.append(CONTINENT_PREFIX + facts.continent)
    codes.append(WORLD)
    return codes


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance by the haversine formula."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlambda = phi2 - phi1, math.radians(lon2 - lon1)
    a = (
        math.sin(dphi / 2) ** 2
        + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    )
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))
