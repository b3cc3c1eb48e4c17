"""The GeoIP adapter on MaxMind DB files built for the test."""

import os
from ipaddress import ip_address
from pathlib import Path

from app.domain.query import GeoFacts
from app.geoip import GeoIp, bundled_database
from tests.support.mmdb import Place, write_city_db


def test_facts_come_from_the_file_with_the_network_prefix(tmp_path: Path) -> None:
    path = write_city_db(
        tmp_path / "city.mmdb",
        {"198.51.100.0/24": Place("NA", "US", "CA", 37.77, -122.42)},
    )
    facts = GeoIp(path).locate(ip_address("198.51.100.9"))
    assert facts is not None
    assert (facts.continent, facts.country, facts.subdivision) == ("NA", "US", "US-CA")
    assert (facts.latitude, facts.longitude, facts.prefix) == (37.77, -122.42, 24)
    # no record: no place, but the empty network around the address (192/6
    # holds nothing written), so an answer without a location has an exact scope
    assert GeoIp(path).locate(ip_address("192.0.2.1")) == GeoFacts(prefix=6)


def test_a_replaced_file_is_reloaded_without_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "city.mmdb"
    write_city_db(path, {"198.51.100.0/24": Place("EU", "FR", None, 48.9, 2.3)})
    now = [0.0]
    geo = GeoIp(path, clock=lambda: now[0])
    client = ip_address("198.51.100.9")
    assert geo.locate(client).country == "FR"
    replacement = tmp_path / "new.mmdb"
    write_city_db(replacement, {"198.51.100.0/24": Place("EU", "DE", None, 52.5, 13.4)})
    os.replace(replacement, path)
    os.utime(path, (1_000_000, 1_000_000))
    assert geo.locate(client).country == "FR"  # checked every 5 s, not per query
    assert geo.version() == 1
    now[0] = 6.0
    assert geo.version() == 2  # version() checks the file too, without a lookup
    assert geo.locate(client).country == "DE"
    now[0] = 12.0
    assert geo.version() == 2  # the same file: the same version


def test_a_missing_file_means_no_location_not_a_crash(tmp_path: Path) -> None:
    assert GeoIp(tmp_path / "absent.mmdb").locate(ip_address("198.51.100.9")) is None


def test_the_bundled_database_is_real_data() -> None:
    path = bundled_database()
    assert path is not None
    facts = GeoIp(path).locate(ip_address("81.2.69.160"))  # a MaxMind test address
    assert facts is not None and facts.country == "GB"
