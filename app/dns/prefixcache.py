"""Replies to client-dependent names, cached per deciding prefix.

A geographic, subnet or performance answer (or one from a profile nesting
others) is decided by the leading bits of the client address: answer() says
how many in `holds_for`, exactly, so a reply decided for address A with S bits
holds for every client in A/S (RFC 7871's meaning of the ECS scope). Replies
are kept under (name, type, EDNS kind, address family, client prefix, S, A
masked to S); a lookup tries the few S seen for that name and client, longest
first.

Who the client is comes from app.dns.client, which the full path uses too:
the ECS address when its source prefix is above 0, else the packet's source
address with all its bits. The client prefix is part of the key because the decision may
depend on it (performance spreads clients per /24, or per ECS source prefix
when that is shorter), not only on the address.

Scope 0 needs no special case: it says the answer did not look at the address
at all (all endpoints down and a fixed fallback, NODATA, a subnet profile with
no range of this family, no GeoIP database loaded), so it is stored under the
family's /0 and served to every client of that family and client prefix. That
is only right because every scope is exact: an address the GeoIP database
does not know gets the scope of the empty network around it, not 0.

A reply is stored only when S is within what the query tells about the client
(the ECS source prefix, or the whole source address): a decision that needs
more bits than an ECS option carries is answered but not kept. The cache
belongs to one snapshot and one GeoIP database version: a new database (which
app.geoip loads without a new snapshot) drops it. At MAX_ENTRIES it is
dropped and refilled by the queries that follow, so one-off clients (or forged
ECS addresses) cannot hold the memory or lock out the clients after them; a
miss costs what the full path costs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from random import Random

from app.dns.client import Client, client_of, context_of
from app.dns.replies import Entry, Key, WireMemo, encoded
from app.dns.wire import Malformed, parse_query
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.variants import variants

MAX_ENTRIES = 100_000


@dataclass(slots=True)
class _Table:
    """The replies for one question and one kind of client, by deciding block."""

    scopes: list[int] = field(default_factory=list)  # longest first
    entries: dict[int, Entry] = field(default_factory=dict)  # block << 8 | scope
    enumerable: bool = True


class PrefixCache:
    """Per-prefix replies for one snapshot, filled on first use."""

    def __init__(
        self,
        snapshot: Snapshot,
        locate: Locate,
        locate_version: Callable[[], Hashable],
        limit: int = MAX_ENTRIES,
    ) -> None:
        self._snapshot = snapshot
        self._locate = locate
        self._locate_version = locate_version
        self._version = locate_version()
        self._limit = limit
        self._tables: dict[tuple[Key, int, int], _Table] = {}
        self._shared: dict[Entry, Entry] = {}  # blocks with equal replies share one
        self._wires: WireMemo = {}  # so a new block rarely encodes anything
        self.size = 0

    def pick(
        self, wire: bytes, key: Key, ecs: bytes | None, host: str, rng: Random
    ) -> tuple[bytes, int] | None:
        """A stored reply and its ECS scope, or None for the full path."""
        client = client_of(ecs, host)
        if client is None:
            return None
        version = self._locate_version()
        if version != self._version:
            self.clear()  # locations moved: answers that used them may be wrong
            self._version = version
        bits, address, prefix, _ = client
        table = self._tables.get((key, bits, prefix))
        if table is not None:
            for scope in table.scopes:
                entry = table.entries.get((address >> (bits - scope)) << 8 | scope)
                if entry is not None:
                    return entry.pick(rng)
            if not table.enumerable:
                return None
        entry = self._build(wire, key, client)
        return entry.pick(rng) if entry is not None else None

    def clear(self) -> None:
        self._tables.clear()
        self._shared.clear()
        self._wires.clear()
        self.size = 0

    def _build(self, wire: bytes, key: Key, client: Client) -> Entry | None:
        """Answer on the full answer path; keep the reply when it is decided
        within what the query tells about the client."""
        bits, address, prefix, known = client
        try:
            query = parse_query(wire)
        except Malformed:
            return None
        if self.size >= self._limit:
            self.clear()
        table = self._tables.setdefault((key, bits, prefix), _Table())
        # Answers do not depend on the time within one snapshot (an override
        # running out makes a new snapshot), so the compile time stands in.
        ctx = context_of(client, lambda: self._snapshot.compiled_at, self._locate)
        found = variants(self._snapshot, query.qname, query.qtype, ctx)
        if found is None:
            table.enumerable = False  # several random draws: the full path, always
            return None
        entry = encoded(query, key[2], found, self._wires)
        scope = found.holds_for
        if scope > known:
            return entry
        entry = self._shared.setdefault(entry, entry)
        table.entries[(address >> (bits - scope)) << 8 | scope] = entry
        if scope not in table.scopes:
            table.scopes.append(scope)
            table.scopes.sort(reverse=True)
        self.size += 1
        return entry
