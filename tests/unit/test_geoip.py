"""The GeoIP adapter on MaxMind DB files built for the test."""

import os
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path
from random import Random

import maxminddb

from app.domain.query import GeoFacts
from app.geoip import GeoIp, LocatedNetworks, bundled_database, facts_from
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


def test_every_address_of_a_located_network_gets_what_the_database_says() -> None:
    """Located networks are kept, so that the next client of a network costs
    no lookup: the facts must still be the database's own, address by
    address, for random addresses, their neighbours, and IPv6 ones."""
    path = bundled_database()
    assert path is not None
    geo = GeoIp(path)
    reader = maxminddb.open_database(str(path))
    rng = Random(5)
    first = [IPv4Address(rng.randrange(1 << 32)) for _ in range(2_000)]
    neighbours = [IPv4Address(int(a) ^ rng.randrange(1, 1 << 12)) for a in first]
    six = [IPv6Address((0x2A00 << 112) | rng.randrange(1 << 112)) for _ in range(500)]
    kept = 0
    for address in first + neighbours + first + six + six:
        record, prefix = reader.get_with_prefix_len(str(address))
        prefix = min(prefix, address.max_prefixlen)
        wanted = facts_from(record, prefix) if record else GeoFacts(prefix=prefix)
        assert geo.locate(address) == wanted, address
        kept += wanted.country is not None
    assert kept > 1_000  # most of them placed: the comparison is not of empties


def test_kept_networks_are_bounded() -> None:
    """A flood of clients from everywhere: past the bound the kept networks
    are forgotten at once, so memory stays flat, and lookups start again."""
    networks = LocatedNetworks(limit=2)
    facts = {n: GeoFacts(country=c, prefix=24) for n, c in [(1, "DE"), (2, "FR")]}
    networks.keep(IPv4Address("198.51.100.1"), facts[1])
    networks.keep(IPv4Address("203.0.113.1"), facts[2])
    assert networks.find(IPv4Address("198.51.100.200")) == facts[1]
    networks.keep(IPv4Address("192.0.2.1"), GeoFacts(prefix=24))
    assert networks.find(IPv4Address("198.51.100.200")) is None
    assert networks.find(IPv4Address("203.0.113.7")) is None
    assert networks.find(IPv4Address("192.0.2.9")) == GeoFacts(prefix=24)


def test_the_blocks_of_a_kept_network_are_bounded_too() -> None:
    """Each /24 of a kept network is kept on its own for a one-probe lookup;
    those too stay within the bound, and every address still finds its
    network's facts once they are forgotten."""
    networks = LocatedNetworks(limit=3)
    wide = GeoFacts(country="NL", prefix=16)
    networks.keep(IPv4Address("10.7.0.1"), wide)
    for third in range(40):
        assert networks.find(IPv4Address(f"10.7.{third}.9")) == wide
        assert len(networks._blocks) <= 3
    assert networks.find(IPv4Address("10.8.0.1")) is None
