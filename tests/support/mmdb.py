"""Small MaxMind DB (.mmdb) files in the GeoIP2/GeoLite2-City layout, for tests.

`write_city_db` writes the networks it is given, and only those, with records
shaped as GeoLite2-City's as read by the `maxminddb` package::

    {"continent": {"code": "EU"},
     "country": {"iso_code": "DE"},
     "subdivisions": [{"iso_code": "BE"}],   # left out when there is none
     "location": {"latitude": 52.5, "longitude": 13.4}}

The file is an IPv6 database (ip_version 6), as MaxMind's are: IPv4 networks
live under ``::/96``, where readers start an IPv4 lookup, and, as in MaxMind's
own databases, ``::ffff:0:0/96`` (IPv4-mapped), ``2001::/32`` (Teredo) and
``2002::/16`` (6to4) are aliases of that subtree, so ``::ffff:10.1.2.3`` finds
what ``10.1.2.3`` finds. IPv6 networks overlapping ``::/96``, or inside an
alias, are refused (write those addresses as IPv4 networks); a network that
contains an alias (``2000::/3``) keeps every address but the alias's, as with
MaxMind's writer.

What ``reader.get_with_prefix_len(ip)`` reports (maxminddb 3.2, the C extension
and the pure-Python reader alike):

* For an IPv4 address, the IPv4 prefix length (24 for a /24), not 96 + 24.
  The same network reached through an IPv6 spelling counts the IPv6 bits:
  ``::ffff:10.1.2.3`` and ``::a01:203`` give 120, ``2002:a01:203::`` gives 40,
  ``2001:0:a01:203::`` gives 56.
* The length is the depth at which the lookup left the search tree, not the
  network that was written. Writing a /24 inside a /16 splits the /16 into
  the /24's siblings, so an address of the /16 outside the /24 reports 24, 23,
  22 … 17 according to where it lies (10.1.3.3 gives 24, 10.1.0.1 gives 23,
  10.1.128.1 gives 17). Real GeoLite2 files behave the same way.
* An address in no network gives ``(None, depth)``, the depth being where the
  tree ran out (for example 15, not 0).

Writing uses the ``mmdb-writer`` package (which needs ``netaddr``); networks are
inserted least specific first, whatever the mapping's order, because that
writer lets a later, larger network overwrite a smaller one already written.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmdb_writer import MMDBWriter, SearchTreeLeaf, SearchTreeNode
from netaddr import IPSet

CONTINENTS = frozenset({"AF", "AN", "AS", "EU", "NA", "OC", "SA"})

IPV4_ROOT = ipaddress.IPv6Network("::/96")
IPV4_ALIASES = (
    ipaddress.IPv6Network("::ffff:0:0/96"),
    ipaddress.IPv6Network("2001::/32"),
    ipaddress.IPv6Network("2002::/16"),
)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Place:
    continent: str  # MaxMind continent code, e.g. "EU", "NA"
    country: str  # ISO 3166-1 alpha-2, e.g. "DE"
    subdivision: str | None  # ISO 3166-2 suffix, e.g. "CA" for US-CA
    latitude: float
    longitude: float

    def __post_init__(self) -> None:
        if self.continent not in CONTINENTS:
            raise ValueError(f"unknown continent code {self.continent!r}")
        if len(self.country) != 2 or not self.country.isalpha():
            raise ValueError(f"not an ISO 3166-1 alpha-2 code: {self.country!r}")
        if self.subdivision is not None and not (
            self.subdivision.isalnum() and 1 <= len(self.subdivision) <= 3
        ):
            raise ValueError(f"not an ISO 3166-2 suffix: {self.subdivision!r}")
        if not (-90.0 <= self.latitude <= 90.0 and -180.0 <= self.longitude <= 180.0):
            raise ValueError(f"bad coordinates {self.latitude}, {self.longitude}")

    def record(self) -> dict[str, Any]:
        """The place as a GeoLite2-City record, as `maxminddb` returns it."""
        record: dict[str, Any] = {
            "continent": {"code": self.continent},
            "country": {"iso_code": self.country},
        }
        if self.subdivision is not None:
            record["subdivisions"] = [{"iso_code": self.subdivision}]
        record["location"] = {
            "latitude": float(self.latitude),
            "longitude": float(self.longitude),
        }
        return record


def write_city_db(
    path: Path, places: Mapping[str, Place], *, ipv4_aliases: bool = True
) -> Path:
    """Write networks (CIDR strings, IPv4 and IPv6) with their places.

    ``ipv4_aliases=False`` leaves out the IPv4-mapped, Teredo and 6to4 aliases.
    A network with host bits set, a network given twice, an IPv6 network
    overlapping ``::/96`` (so also ``::/0``) or one inside an alias in use
    raises ValueError.
    """
    networks = sorted(
        _parse(places, ipv4_aliases),
        key=lambda item: _tree_prefixlen(item[0]),
    )
    writer = MMDBWriter(
        ip_version=6,
        database_type="GeoLite2-City",
        languages=["en"],
        description={"en": "tmdns test GeoLite2-City"},
        ipv4_compatible=True,
    )
    for network, place in networks:
        writer.insert_network(IPSet([str(network)]), place.record())
    if ipv4_aliases:
        _alias_ipv4(writer.tree)
    writer.to_db_file(str(path))
    return path


def _parse(
    places: Mapping[str, Place], ipv4_aliases: bool
) -> list[tuple[Network, Place]]:
    aliases = IPV4_ALIASES if ipv4_aliases else ()
    parsed: dict[Network, Place] = {}
    for cidr, place in places.items():
        network = ipaddress.ip_network(cidr.strip(), strict=True)
        if network in parsed:
            raise ValueError(f"network {network} given twice")
        if isinstance(network, ipaddress.IPv6Network):
            if network.overlaps(IPV4_ROOT):
                raise ValueError(
                    f"{network} overlaps {IPV4_ROOT}, where IPv4 networks live"
                )
            for alias in aliases:
                if network.subnet_of(alias):
                    raise ValueError(f"{network} is inside the IPv4 alias {alias}")
        parsed[network] = place
    return list(parsed.items())


def _tree_prefixlen(network: Network) -> int:
    """Depth of the network in the IPv6 search tree (IPv4 sits under ::/96)."""
    if isinstance(network, ipaddress.IPv4Network):
        return 96 + network.prefixlen
    return network.prefixlen


def _child(node: SearchTreeNode, bit: int) -> SearchTreeNode:
    """The node under `node` on side `bit`, splitting a written network there.

    A leaf in the way is a network that contains the path (2000::/3 on the way
    to 2002::/16): it becomes a node whose two sides both hold the leaf, so
    that network keeps every address but the ones the path goes on to claim.
    """
    child = node.get_or_create(bit)
    if isinstance(child, SearchTreeLeaf):
        child = SearchTreeNode(child, child)
        node[bit] = child
    assert isinstance(child, SearchTreeNode)
    return child


def _bits(network: ipaddress.IPv6Network) -> list[int]:
    value = int(network.network_address)
    return [(value >> (127 - i)) & 1 for i in range(network.prefixlen)]


def _alias_ipv4(tree: SearchTreeNode) -> None:
    """Point the alias networks at the IPv4 subtree, as MaxMind's writers do.

    mmdb-writer numbers tree nodes by identity, so one node reached by several
    paths is written once and every path leads to it: a true alias.
    """
    *path, last = _bits(IPV4_ROOT)
    node = tree
    for bit in path:
        node = _child(node, bit)
    # A node, or a leaf when 0.0.0.0/0 was written.
    ipv4_root = node.get_or_create(last)
    for alias in IPV4_ALIASES:
        *path, last = _bits(alias)
        node = tree
        for bit in path:
            node = _child(node, bit)
        # Whatever was there belongs to a network containing the alias; the
        # alias takes its place, as MaxMind's writers keep aliases over data.
        node[last] = ipv4_root
