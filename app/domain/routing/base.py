"""What every routing method receives, and the shape of a method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from random import Random

from app.domain.latency import LatencyTable
from app.domain.model import Endpoint, Profile
from app.domain.query import Decision, QueryContext
from app.domain.ranges import AddressRange


@dataclass(frozen=True, slots=True)
class Candidates:
    """The endpoints a method may choose from for one query.

    `available` can answer the asked type and is healthy enough; `usable` can
    answer it and is enabled and not held back by an operator, whatever its
    health (geographic serves its match regardless of health, like Azure).
    """

    profile: Profile
    available: tuple[Endpoint, ...]
    usable: tuple[Endpoint, ...]
    parked: int | None = None  # priority/parking: the endpoint in use
    ranges: Mapping[int, tuple[AddressRange, ...]] = field(default_factory=dict)
    latency: LatencyTable = field(default_factory=LatencyTable)


Router = Callable[[Candidates, QueryContext, Random], Decision]
