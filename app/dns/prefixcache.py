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

Names decided by place alone (geographic profiles, and profiles nesting only
those and client-independent ones: app.domain.variants.decided_by_place) share
their replies between every block of one GeoIP place: a new block then costs
one GeoIP lookup, not a decision and an encoding. Each answer's scope is
carried over as "the client's GeoIP network" or "none", the only two a
place-decided answer can have, and worked out for the new block's network.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from random import Random

from app.dns.client import Client, address_of, client_of, context_of
from app.dns.replies import Entry, Key, WireMemo, encoded
from app.dns.wire import parse_query
from app.domain.query import GeoFacts, Locate
from app.domain.snapshot import Snapshot
from app.domain.variants import Variants, decided_by_place, variants

MAX_ENTRIES = 100_000


@dataclass(slots=True)
class _Table:
    """The replies for one question and one kind of client, by deciding block."""

    scopes: list[int] = field(default_factory=list)  # longest first
    entries: dict[int, Entry] = field(default_factory=dict)  # block << 8 | scope
    enumerable: bool = True


@dataclass(frozen=True, slots=True)
class _Placed:
    """The replies every client block of one place gets: per reply, whether
    its scope is the block's GeoIP network (else it is 0)."""

    replies: tuple[tuple[bytes, bool], ...]
    cumulative: tuple[float, ...] | None

    def entry(self, network: int, prefix: int) -> tuple[Entry, int]:
        """The entry for a block in a GeoIP network of `network` bits, asked
        with `prefix` known bits, and the bits it holds for."""
        scope = min(network, prefix)
        replies = tuple((wire, scope if on else 0) for wire, on in self.replies)
        holds = network if any(on for _, on in self.replies) else 0
        return Entry(replies, self.cumulative), holds


PlaceKey = tuple[Key, int, int, tuple[str | None, str | None, str | None]]


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
        self._by_place: dict[Key, bool] = {}  # decided_by_place, per question
        self._placed: dict[PlaceKey, _Placed] = {}
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
        self._placed.clear()
        self.size = 0

    def _build(self, wire: bytes, key: Key, client: Client) -> Entry | None:
        """Answer on the full answer path; keep the reply when it is decided
        within what the query tells about the client."""
        bits, _, prefix, _ = client
        placed = self._by_place.get(key)
        facts: GeoFacts | None = None
        if placed:
            facts = self._locate(address_of(client))
            shared = self._placed.get(_place_key(key, client, facts))
            if shared is not None:
                network = facts.prefix if facts is not None else 0
                entry, holds = shared.entry(network, prefix)
                return self._keep(key, client, entry, holds)
        # The wire passed app.dns.wirecache.plain_query, which lets through
        # only what parse_query accepts: this cannot raise Malformed.
        query = parse_query(wire)
        if placed is None:
            placed = self._by_place[key] = decided_by_place(self._snapshot, query.qname)
            if placed:
                facts = self._locate(address_of(client))
        # Answers do not depend on the time within one snapshot (an override
        # running out makes a new snapshot), so the compile time stands in.
        located: Locate = (lambda _: facts) if placed else self._locate
        ctx = context_of(client, lambda: self._snapshot.compiled_at, located)
        found = variants(self._snapshot, query.qname, query.qtype, ctx)
        if found is None:
            table = self._tables.setdefault((key, bits, prefix), _Table())
            table.enumerable = False  # several random draws: the full path, always
            return None
        entry = encoded(query, key[2], found, self._wires)
        if placed and facts is not None:
            self._share_by_place(key, client, facts, found, entry)
        return self._keep(key, client, entry, found.holds_for)

    def _share_by_place(
        self,
        key: Key,
        client: Client,
        facts: GeoFacts,
        found: Variants,
        entry: Entry,
    ) -> None:
        """Keep the replies for other blocks of this place, when every answer
        holds for the client's GeoIP network or for nothing, as answers decided
        by place do (anything else is not shared: a safeguard)."""
        network = facts.prefix
        if network == 0 or any(a.holds_for not in (0, network) for a in found.answers):
            return
        if len(self._placed) >= self._limit:
            self._placed.clear()
        replies = tuple(
            (wire, a.holds_for == network)
            for (wire, _), a in zip(entry.replies, found.answers, strict=True)
        )
        self._placed[_place_key(key, client, facts)] = _Placed(
            replies, entry.cumulative
        )

    def _keep(self, key: Key, client: Client, entry: Entry, holds: int) -> Entry:
        """Store the entry for the client's block of `holds` bits, when the
        query tells that many."""
        bits, address, prefix, known = client
        if holds > known:
            return entry
        if self.size >= self._limit:
            self.clear()
        table = self._tables.setdefault((key, bits, prefix), _Table())
        entry = self._shared.setdefault(entry, entry)
        table.entries[(address >> (bits - holds)) << 8 | holds] = entry
        if holds not in table.scopes:
            table.scopes.append(holds)
            table.scopes.sort(reverse=True)
        self.size += 1
        return entry


def _place_key(key: Key, client: Client, facts: GeoFacts | None) -> PlaceKey:
    place = facts.place if facts is not None else (None, None, None)
    return key, client.bits, client.prefix, place
