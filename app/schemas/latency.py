"""The latency table for performance routing, replaced as a whole."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue, field_validator

from app.domain.model import LatencyRows
from app.domain.regions import REGIONS, region_coordinates
from app.schemas.common import Strict, Subnet

REGION_NAMES: list[JsonValue] = [name for name in sorted(REGIONS)]


class LatencyEntryIn(Strict):
    network: Subnet = Field(examples=["198.51.100.0/24"])
    rtt: dict[str, Annotated[float, Field(ge=0)]] = Field(
        min_length=1,
        description="location (an endpoint's region) → round trip, ms",
        json_schema_extra={"propertyNames": {"enum": REGION_NAMES}},
    )

    @field_validator("rtt")
    @classmethod
    def _regions(cls, value: dict[str, float]) -> dict[str, float]:
        """Locations are the named regions endpoints are placed in."""
        rtt = {k.strip().lower(): v for k, v in value.items()}
        for location in rtt:
            if region_coordinates(location) is None:
                raise ValueError(
                    f"unknown region {location!r} (use provider:id, "
                    "e.g. aws:eu-west-1, azure:westeurope, gcp:us-east1)"
                )
        return rtt


class LatencyIn(Strict):
    """The whole latency table for performance routing, replaced at once."""

    entries: list[LatencyEntryIn] = Field(max_length=100_000)

    @field_validator("entries")
    @classmethod
    def _distinct(cls, value: list[LatencyEntryIn]) -> list[LatencyEntryIn]:
        seen: set[str] = set()
        for entry in value:
            if entry.network in seen:
                raise ValueError(f"network {entry.network} is listed twice")
            seen.add(entry.network)
        return value

    def to_domain(self) -> LatencyRows:
        return tuple((e.network, e.rtt) for e in self.entries)

    @classmethod
    def from_domain(cls, rows: LatencyRows) -> LatencyIn:
        return cls(entries=[LatencyEntryIn(network=n, rtt=dict(r)) for n, r in rows])
