"""The export document's shape: models, version, formats. No parsing, no I/O."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from app.domain import names
from app.domain.model import StaticRRset, Zone
from app.schemas import LatencyEntryIn, ProfileIn, Strict, ZoneIn
from app.schemas.rrsets import RRsetIn, static_type

Format = Literal["yaml", "json"]
VERSION = 1


class RRsetEntry(RRsetIn):
    """A static rrset of the document: the API's body with its name and type."""

    name: str = Field(min_length=1, max_length=255)
    type: str

    def to_domain_in(self, zone: str) -> StaticRRset:
        name = names.join(names.relative(self.name, zone), zone)
        return self.to_domain(name, static_type(self.type), zone)


class ZoneEntry(ZoneIn):
    """A zone of the document: ZoneIn's fields, its static rrsets (all of
    them: an import replaces the zone's set) and its profiles. Without `ns`
    the entry names an existing zone, whose settings are left as they are."""

    ns: list[str] = Field(default_factory=list, max_length=13)
    rrsets: list[RRsetEntry] = Field(default_factory=list)
    profiles: list[ProfileIn] = Field(default_factory=list)

    @model_validator(mode="after")
    def _settings_need_ns(self) -> Self:
        given = self.model_fields_set & {"soa_email", "negative_ttl", "glue", "rrsets"}
        if not self.ns and given:
            raise ValueError(
                f"{', '.join(sorted(given))} needs 'ns': a zone without 'ns' only "
                "names an existing zone"
            )
        return self


class Document(Strict):
    """The whole configuration as one YAML or JSON document, for keeping it in git.

        version: 1
        zones:
        - name: tm.example.
          ns: [ns1.tm.example.]
          glue: {ns1.tm.example.: [192.0.2.53]}
          profiles:
          - name: app                      # relative to the zone, "@" is the apex
            method: priority
            endpoints:
            - {name: primary, address: 192.0.2.10}
        latency:
        - {network: 198.51.100.0/24, rtt: {azure:westeurope: 12}}

    A zone is ZoneIn's fields with its profiles (ProfileIn bodies); a zone entry
    without `ns` names an existing zone and leaves its settings as they are (the
    shape of an import of a few profiles into a zone managed elsewhere). Fields
    at their defaults are left out, so files stay short, and the output is
    deterministic: zones and profiles sorted by name, endpoints in their order.
    """

    version: Literal[1]
    zones: list[ZoneEntry] = Field(default_factory=list)
    latency: list[LatencyEntryIn] = Field(default_factory=list)


def is_reference(zone: Zone) -> bool:
    """A zone from an entry without `ns`: an existing zone, its settings untouched."""
    return not zone.ns
