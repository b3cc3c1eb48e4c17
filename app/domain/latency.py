"""The operator's latency table: client networks → round-trip time per location."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.domain.model import IPAddress
from app.domain.ranges import AddressRange, block_scope, most_specific


@dataclass(frozen=True, slots=True)
class LatencyEntry:
    network: AddressRange
    rtt_ms: Mapping[str, float]  # location (region name) → measured round trip


@dataclass(frozen=True, slots=True)
class LatencyTable:
    entries: tuple[LatencyEntry, ...] = ()

    def lookup(self, client: IPAddress) -> tuple[LatencyEntry, int] | None:
        """The most specific entry covering the client, with the ECS scope it
        decides: the block around the client inside that entry and clear of any
        more specific entry."""
        networks = [e.network for e in self.entries]
        hit = most_specific(networks, client)
        if hit is None:
            return None
        entry = next(e for e in self.entries if e.network is hit)
        size = hit.last - hit.first
        inner = [n for n in networks if n.last - n.first < size and hit.overlaps(n)]
        scope = max(block_scope(client, hit, ()), block_scope(client, None, inner))
        return entry, scope

    def miss_scope(self, client: IPAddress) -> int:
        """The ECS scope of a client no entry covers: the block around it clear
        of every entry, whose clients all miss the table too."""
        return block_scope(client, None, [e.network for e in self.entries])
