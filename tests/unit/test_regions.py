"""The built-in table of cloud regions and lookups in it."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from app.domain.regions import REGIONS, region_coordinates

KEY = re.compile(r"(aws|azure|gcp):[a-z0-9-]+")


def _bare(key: str) -> str:
    return key.partition(":")[2]


def test_keys_are_lowercase_provider_and_id() -> None:
    bad = [key for key in REGIONS if not KEY.fullmatch(key)]
    assert bad == []


def test_every_coordinate_is_a_valid_latitude_and_longitude() -> None:
    for key, coordinates in REGIONS.items():
        assert isinstance(coordinates, tuple), key
        assert len(coordinates) == 2, key
        latitude, longitude = coordinates
        assert isinstance(latitude, float), key
        assert isinstance(longitude, float), key
        assert -90.0 <= latitude <= 90.0, key
        assert -180.0 <= longitude <= 180.0, key


def test_the_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        REGIONS["aws:xx-test-1"] = (0.0, 0.0)  # type: ignore[index]


@pytest.mark.parametrize("provider", ["aws", "azure", "gcp"])
def test_each_provider_has_at_least_25_regions(provider: str) -> None:
    count = sum(1 for key in REGIONS if key.startswith(f"{provider}:"))
    assert count >= 25


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("aws:eu-west-1", (53.3, -6.3)),  # Dublin
        ("aws:us-east-1", (39.0, -77.5)),  # Ashburn
        ("aws:sa-east-1", (-23.5, -46.6)),  # São Paulo
        ("aws:ap-southeast-2", (-33.9, 151.2)),  # Sydney
        ("azure:australiaeast", (-33.9, 151.2)),  # Sydney
        ("azure:westeurope", (52.4, 4.9)),  # Amsterdam
        ("azure:japaneast", (35.7, 139.7)),  # Tokyo
        ("gcp:asia-northeast1", (35.7, 139.7)),  # Tokyo
        ("gcp:europe-west3", (50.1, 8.7)),  # Frankfurt
        ("gcp:us-west2", (34.1, -118.2)),  # Los Angeles
    ],
)
def test_known_regions_are_in_the_right_place(
    key: str, expected: tuple[float, float]
) -> None:
    latitude, longitude = REGIONS[key]
    assert abs(latitude - expected[0]) <= 1.0
    assert abs(longitude - expected[1]) <= 1.0


def test_hemispheres_are_signed() -> None:
    # South and west are negative: a sign slip would move a region across the globe.
    latitude, longitude = REGIONS["aws:sa-east-1"]
    assert latitude < 0 and longitude < 0
    latitude, longitude = REGIONS["gcp:australia-southeast1"]
    assert latitude < 0 < longitude
    latitude, longitude = REGIONS["azure:westus2"]
    assert latitude > 0 > longitude


@pytest.mark.parametrize(
    "name", ["aws:eu-west-1", "AWS:EU-WEST-1", "eu-west-1", "EU-WEST-1", " eu-west-1 "]
)
def test_lookup_by_provider_and_id_or_bare_id(name: str) -> None:
    assert region_coordinates(name) == REGIONS["aws:eu-west-1"]


def test_every_unique_bare_id_resolves() -> None:
    counts = Counter(_bare(key) for key in REGIONS)
    for key, coordinates in REGIONS.items():
        assert region_coordinates(key) == coordinates
        if counts[_bare(key)] == 1:
            assert region_coordinates(_bare(key)) == coordinates, key


def test_bare_azure_and_gcp_ids_resolve() -> None:
    assert region_coordinates("australiaeast") == REGIONS["azure:australiaeast"]
    assert region_coordinates("Asia-Northeast1") == REGIONS["gcp:asia-northeast1"]


@pytest.mark.parametrize(
    "name",
    ["", ":", "aws:", "nowhere-1", "aws:nowhere-1", "azure:eu-west-1", "gcp:eastus"],
)
def test_unknown_names_give_none(name: str) -> None:
    assert region_coordinates(name) is None


def test_an_id_two_providers_share_is_ambiguous_when_bare() -> None:
    table = {
        "aws:shared-1": (1.0, 2.0),
        "gcp:shared-1": (3.0, 4.0),
        "azure:only": (5.0, 6.0),
    }
    assert region_coordinates("shared-1", table) is None
    assert region_coordinates("aws:shared-1", table) == (1.0, 2.0)
    assert region_coordinates("gcp:shared-1", table) == (3.0, 4.0)
    assert region_coordinates("only", table) == (5.0, 6.0)
