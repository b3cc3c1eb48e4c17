"""The test helper that writes GeoLite2-City-shaped .mmdb files, read back with
the `maxminddb` reader (C extension where installed, and pure Python)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import maxminddb
import pytest

from tests.support.mmdb import Place, write_city_db

BERLIN = Place("EU", "DE", "BE", 52.5, 13.4)
MUNICH = Place("EU", "DE", "BY", 48.1, 11.6)
SAN_JOSE = Place("NA", "US", "CA", 37.3, -121.9)
SINGAPORE = Place("AS", "SG", None, 1.3, 103.8)

PLACES = {
    "10.1.0.0/16": BERLIN,
    "10.1.2.0/24": MUNICH,
    "2001:db8::/32": SAN_JOSE,
    "192.0.2.0/24": SINGAPORE,
}

MODES = {
    "auto": maxminddb.MODE_AUTO,
    "python-mmap": maxminddb.MODE_MMAP,
    "python-file": maxminddb.MODE_FILE,
}


@pytest.fixture(params=list(MODES))
def reader(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[maxminddb.Reader]:
    path = write_city_db(tmp_path / "city.mmdb", PLACES)
    with maxminddb.open_database(path, MODES[request.param]) as opened:
        yield opened


def test_write_returns_the_path(tmp_path: Path) -> None:
    path = tmp_path / "city.mmdb"
    assert write_city_db(path, PLACES) == path
    assert path.stat().st_size > 0


def test_metadata_is_a_geolite2_city_ipv6_database(reader: maxminddb.Reader) -> None:
    metadata = reader.metadata()
    assert metadata.database_type == "GeoLite2-City"
    assert metadata.ip_version == 6
    assert metadata.binary_format_major_version == 2
    assert metadata.languages == ["en"]


def test_records_have_the_geolite2_city_layout(reader: maxminddb.Reader) -> None:
    assert reader.get("10.1.2.3") == {
        "continent": {"code": "EU"},
        "country": {"iso_code": "DE"},
        "subdivisions": [{"iso_code": "BY"}],
        "location": {"latitude": 48.1, "longitude": 11.6},
    }
    assert reader.get("2001:db8::1") == {
        "continent": {"code": "NA"},
        "country": {"iso_code": "US"},
        "subdivisions": [{"iso_code": "CA"}],
        "location": {"latitude": 37.3, "longitude": -121.9},
    }


def test_no_subdivision_leaves_the_key_out(reader: maxminddb.Reader) -> None:
    record = reader.get("192.0.2.55")
    assert record == {
        "continent": {"code": "AS"},
        "country": {"iso_code": "SG"},
        "location": {"latitude": 1.3, "longitude": 103.8},
    }


@pytest.mark.parametrize(
    ("ip", "place", "prefix_len"),
    [
        # The more specific /24 wins inside the /16.
        ("10.1.2.3", MUNICH, 24),
        ("10.1.2.255", MUNICH, 24),
        # The rest of the /16 is split around the /24: the reported prefix is
        # the depth of the tree node reached, not the /16 that was written.
        ("10.1.3.3", BERLIN, 24),
        ("10.1.0.1", BERLIN, 23),
        ("10.1.128.1", BERLIN, 17),
        # IPv4 addresses report IPv4 prefix lengths, not 96 + n.
        ("192.0.2.1", SINGAPORE, 24),
        ("2001:db8::1", SAN_JOSE, 32),
        ("2001:db8:ffff::1", SAN_JOSE, 32),
    ],
)
def test_lookups_give_the_place_and_prefix_length(
    reader: maxminddb.Reader, ip: str, place: Place, prefix_len: int
) -> None:
    assert reader.get_with_prefix_len(ip) == (place.record(), prefix_len)


@pytest.mark.parametrize(
    ("ip", "place", "prefix_len"),
    [
        ("::ffff:10.1.2.3", MUNICH, 96 + 24),  # IPv4-mapped
        ("::10.1.2.3", MUNICH, 96 + 24),  # IPv4-compatible: the IPv4 subtree
        ("2002:a01:203::1", MUNICH, 16 + 24),  # 6to4
        ("2001:0:a01:203::1", MUNICH, 32 + 24),  # Teredo
        ("::ffff:10.1.0.1", BERLIN, 96 + 23),
    ],
)
def test_ipv6_spellings_of_ipv4_count_ipv6_bits(
    reader: maxminddb.Reader, ip: str, place: Place, prefix_len: int
) -> None:
    assert reader.get_with_prefix_len(ip) == (place.record(), prefix_len)


@pytest.mark.parametrize("ip", ["10.2.0.1", "8.8.8.8", "2001:db9::1", "::1"])
def test_addresses_in_no_network_give_none(reader: maxminddb.Reader, ip: str) -> None:
    record, prefix_len = reader.get_with_prefix_len(ip)
    assert record is None
    assert 0 < prefix_len <= 128


def test_insertion_order_does_not_matter(tmp_path: Path) -> None:
    reverse = dict(reversed(PLACES.items()))
    for name, places in (("forward", PLACES), ("reverse", reverse)):
        path = write_city_db(tmp_path / f"{name}.mmdb", places)
        with maxminddb.open_database(path) as opened:
            assert opened.get_with_prefix_len("10.1.2.3") == (MUNICH.record(), 24)
            assert opened.get_with_prefix_len("10.1.3.3") == (BERLIN.record(), 24)


def test_aliases_can_be_left_out(tmp_path: Path) -> None:
    path = write_city_db(tmp_path / "city.mmdb", PLACES, ipv4_aliases=False)
    with maxminddb.open_database(path) as opened:
        assert opened.get("10.1.2.3") == MUNICH.record()
        assert opened.get("::ffff:10.1.2.3") is None
        assert opened.get("2002:a01:203::1") is None


def test_a_database_of_ipv6_only_still_answers_ipv4(tmp_path: Path) -> None:
    path = write_city_db(tmp_path / "v6.mmdb", {"2001:db8::/32": SAN_JOSE})
    with maxminddb.open_database(path) as opened:
        assert opened.get("2001:db8::1") == SAN_JOSE.record()
        assert opened.get("10.1.2.3") is None
        assert opened.get("::ffff:10.1.2.3") is None


def test_a_network_containing_an_alias_keeps_the_rest(tmp_path: Path) -> None:
    places = {"2000::/3": SAN_JOSE, "10.1.0.0/16": BERLIN}
    path = write_city_db(tmp_path / "city.mmdb", places)
    with maxminddb.open_database(path) as opened:
        assert opened.get("2400:cb00::1") == SAN_JOSE.record()
        assert opened.get("2001:db8::1") == SAN_JOSE.record()  # not Teredo
        assert opened.get("2003::1") == SAN_JOSE.record()
        assert opened.get("2002:a01:203::1") == BERLIN.record()  # 6to4 alias
        assert opened.get("2002:808:808::1") is None  # 8.8.8.8, in no network
        assert opened.get("2001:0:a01:203::1") == BERLIN.record()  # Teredo alias


def test_iterating_lists_each_network_once(reader: maxminddb.Reader) -> None:
    networks = {str(network) for network, _ in reader}
    assert "10.1.2.0/24" in networks
    assert "2001:db8::/32" in networks
    assert not any(net.startswith(("::ffff:", "2002:", "2001::")) for net in networks)


@pytest.mark.parametrize(
    ("places", "message"),
    [
        ({"10.1.2.3/16": BERLIN}, "host bits"),
        ({"10.1.0.0/16": BERLIN, " 10.1.0.0/16": MUNICH}, "twice"),
        ({"::ffff:10.0.0.0/104": BERLIN}, "inside the IPv4 alias"),
        ({"2002::/16": BERLIN}, "inside the IPv4 alias"),
        ({"2001:0:ab00::/40": BERLIN}, "inside the IPv4 alias"),
        ({"::/0": BERLIN}, "overlaps"),
        ({"::a00:0/104": BERLIN}, "overlaps"),
    ],
)
def test_bad_networks_are_refused(
    tmp_path: Path, places: dict[str, Place], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        write_city_db(tmp_path / "bad.mmdb", places)


def test_bad_places_are_refused() -> None:
    with pytest.raises(ValueError, match="continent"):
        Place("XX", "DE", None, 0.0, 0.0)
    with pytest.raises(ValueError, match="alpha-2"):
        Place("EU", "DEU", None, 0.0, 0.0)
    with pytest.raises(ValueError, match="coordinates"):
        Place("EU", "DE", None, 91.0, 0.0)
