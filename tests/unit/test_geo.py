"""Geographic helpers (app/domain/geo.py): the code hierarchy a client matches,
and great-circle distance."""

from __future__ import annotations

import pytest

from app.domain.geo import distance_km, hierarchy
from app.domain.query import GeoFacts

PARIS = (48.8566, 2.3522)
LONDON = (51.5074, -0.1278)
NEW_YORK = (40.7128, -74.0060)
SYDNEY = (-33.8688, 151.2093)
TOKYO = (35.6762, 139.6503)


@pytest.mark.parametrize(
    ("facts", "codes"),
    [
        (GeoFacts("NA", "US", "US-CA"), ["US-CA", "US", "GEO-NA", "WORLD"]),
        (GeoFacts("EU", "DE", "DE-BY"), ["DE-BY", "DE", "GEO-EU", "WORLD"]),
        (GeoFacts("EU", "FR"), ["FR", "GEO-EU", "WORLD"]),
        (GeoFacts("AS"), ["GEO-AS", "WORLD"]),  # Asia, not American Samoa
        (GeoFacts(None, "AS"), ["AS", "WORLD"]),  # American Samoa
        (GeoFacts(), ["WORLD"]),
        (None, ["WORLD"]),
    ],
)
def test_hierarchy_runs_from_most_specific_to_world(facts, codes) -> None:
    assert hierarchy(facts) == codes


@pytest.mark.parametrize(
    ("a", "b", "km", "tolerance"),
    [
        (PARIS, LONDON, 344, 5),
        (LONDON, NEW_YORK, 5570, 20),
        (NEW_YORK, TOKYO, 10850, 50),
        (SYDNEY, LONDON, 16990, 50),
        (PARIS, PARIS, 0, 1e-6),
        ((0.0, 0.0), (0.0, 180.0), 20015, 5),  # half the equator
        ((90.0, 0.0), (-90.0, 0.0), 20015, 5),  # pole to pole
    ],
)
def test_distance_is_the_great_circle_in_km(a, b, km, tolerance) -> None:
    assert distance_km(*a, *b) == pytest.approx(km, abs=tolerance)
    assert distance_km(*b, *a) == pytest.approx(distance_km(*a, *b))


def test_distance_is_the_short_way_round_the_date_line() -> None:
    assert distance_km(0.0, 179.0, 0.0, -179.0) == pytest.approx(222.4, abs=0.5)
