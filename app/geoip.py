"""Client location from a MaxMind DB file (GeoLite2 / DB-IP City layout).

The database is memory-mapped and looked up only for the methods that need a
location; the file is reopened when it changes on disk, so operators can
drop in a fresh GeoLite2 or DB-IP file without a restart.

An address the database has no record for still gets GeoFacts: no place, but
the length of the empty network around it, so that an answer decided without
a location carries an exact ECS scope; None means no database is loaded.

A lookup decodes the whole City record (names in eight languages and more),
about 8 µs, the largest part of a full-path geographic answer; the facts of
each network found are kept (LocatedNetworks), so every later client of a
network costs a few dictionary probes.
"""

from __future__ import annotations

import importlib.util
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import maxminddb

from app.domain.model import IPAddress
from app.domain.query import GeoFacts

log = logging.getLogger(__name__)
RECHECK_SECONDS = 5.0
NETWORKS_KEPT = 100_000  # and as many /24s; past that, forgotten at once
BLOCK_SHIFT = 8  # an IPv4 /24
RESORT_EVERY = 1024  # networks kept between two orderings of the tables


class LocatedNetworks:
    """The facts of the networks looked up so far, by network.

    The networks of a MaxMind DB are the leaves of one binary tree, so they
    never overlap: at most one kept network holds an address, and probing
    each prefix length seen finds it. One table per (IP version, length)
    keyed by the network's number shifted right (an int hashes cheaply),
    probed biggest first. IPv4 clients come mostly as /24s (ECS, or hosts of
    one block), so each /24 inside a kept network is also kept on its own and
    probed before the tables (about 26 lengths are met).
    """

    def __init__(self, limit: int = NETWORKS_KEPT) -> None:
        self._limit = limit
        self._size = 0
        self._blocks: dict[int, GeoFacts] = {}  # IPv4 /24 → its network's facts
        # per IP version: (shift, table), biggest table first
        self._tables: dict[int, list[tuple[int, dict[int, GeoFacts]]]] = {4: [], 6: []}
        self._by_shift: dict[tuple[int, int], dict[int, GeoFacts]] = {}

    def find(self, address: IPAddress) -> GeoFacts | None:
        number = int(address)
        version = address.version
        if version == 4:
            facts = self._blocks.get(number >> BLOCK_SHIFT)
            if facts is not None:
                return facts
        for shift, table in self._tables[version]:
            facts = table.get(number >> shift)
            if facts is not None:
                if version == 4 and shift >= BLOCK_SHIFT:
                    self._keep_block(number, facts)
                return facts
        return None

    def keep(self, address: IPAddress, facts: GeoFacts) -> None:
        """`facts` for the whole network around `address` (of facts.prefix)."""
        if self._size >= self._limit:
            self.clear()
        version, number = address.version, int(address)
        shift = address.max_prefixlen - facts.prefix
        table = self._by_shift.get((version, shift))
        if table is None:
            table = self._by_shift[(version, shift)] = {}
            self._tables[version].append((shift, table))
        table[number >> shift] = facts
        self._size += 1
        if self._size % RESORT_EVERY == 0:
            for tables in self._tables.values():
                tables.sort(key=lambda kept: -len(kept[1]))
        if version == 4 and shift >= BLOCK_SHIFT:
            self._keep_block(number, facts)

    def _keep_block(self, number: int, facts: GeoFacts) -> None:
        if len(self._blocks) >= self._limit:
            self._blocks.clear()  # the tables still hold every network
        self._blocks[number >> BLOCK_SHIFT] = facts

    def clear(self) -> None:
        self._size = 0
        self._blocks = {}
        self._tables = {4: [], 6: []}
        self._by_shift = {}


def bundled_database() -> Path | None:
    """GeoLite2-City as shipped by the `maxminddb-geolite2` package (July 2018,
    CC BY-SA 4.0): real data out of the box, old; point tmdns at a current file
    for production."""
    spec = importlib.util.find_spec("_maxminddb_geolite2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "GeoLite2-City.mmdb"
    return path if path.is_file() else None


class GeoIp:
    def __init__(
        self, path: Path | None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._path = path
        self._clock = clock
        self._reader: Any = None
        self._stamp: tuple[float, int] | None = None
        self._checked = float("-inf")
        self._loads = 0
        self._networks = LocatedNetworks()
        self._reload()

    @property
    def path(self) -> Path | None:
        return self._path

    def _reload(self) -> None:
        if self._path is None:
            return
        try:
            stat = self._path.stat()
        except OSError as exc:
            log.warning("GeoIP database %s unreadable: %s", self._path, exc)
            return
        stamp = (stat.st_mtime, stat.st_size)
        if stamp == self._stamp:
            return
        try:
            reader = maxminddb.open_database(str(self._path), maxminddb.MODE_AUTO)
        except (OSError, ValueError) as exc:
            log.warning("GeoIP database %s not loaded: %s", self._path, exc)
            return
        old, self._reader, self._stamp = self._reader, reader, stamp
        self._loads += 1
        self._networks.clear()
        if old is not None:
            old.close()
        built = reader.metadata().build_epoch
        log.info(
            "GeoIP database %s loaded (%s, built %s)",
            self._path,
            reader.metadata().database_type,
            time.strftime("%Y-%m-%d", time.gmtime(built)),
        )

    def locate(self, address: IPAddress) -> GeoFacts | None:
        self._recheck()
        if self._reader is None:
            return None
        facts = self._networks.find(address)
        if facts is None:
            facts = self._look_up(address)
            self._networks.keep(address, facts)
        return facts

    def _look_up(self, address: IPAddress) -> GeoFacts:
        record, prefix = self._reader.get_with_prefix_len(address)
        prefix = max(0, min(prefix, address.max_prefixlen))
        if not isinstance(record, dict):
            return GeoFacts(prefix=prefix)  # the whole empty network is unknown
        return facts_from(record, prefix)

    def version(self) -> int:
        """Changes whenever another database file is loaded, so that answers
        cached from locations can be dropped. Checks the file as locate()
        does: a cache that spares locate() calls still sees a new file."""
        self._recheck()
        return self._loads

    def _recheck(self) -> None:
        now = self._clock()
        if now - self._checked >= RECHECK_SECONDS:
            self._checked = now
            self._reload()

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def facts_from(record: dict[str, Any], prefix: int) -> GeoFacts:
    """GeoLite2 fields → GeoFacts; MaxMind stores subdivisions without the country."""
    country_record = record.get("country") or record.get("registered_country")
    country = country_record.get("iso_code") if country_record else None
    subdivisions = record.get("subdivisions")
    first = subdivisions[0].get("iso_code") if subdivisions else None
    continent = record.get("continent")
    location = record.get("location") or _NO_LOCATION
    return GeoFacts(  # positional: a lookup that misses every kept network
        continent.get("code") if continent else None,
        country,
        f"{country}-{first}" if country and first else None,
        location.get("latitude"),
        location.get("longitude"),
        prefix,
    )


_NO_LOCATION: dict[str, Any] = {}
