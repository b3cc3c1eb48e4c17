"""Shared building blocks of the schemas: the strict base, field types, validators."""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Annotated, Any, TypeVar

import pycountry
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)

from app.domain import geo, names
from app.domain.model import IPAddress
from app.domain.ranges import parse_range


def _ip(value: Any) -> IPAddress:
    """One error in words for a bad address, instead of one per union branch."""
    if isinstance(value, IPv4Address | IPv6Address):
        return value
    if not isinstance(value, str):
        raise ValueError("an IP address must be a string")
    if "%" in value:
        raise ValueError(
            f"{value!r} has a zone index: give a plain address, as DNS carries it"
        )
    try:
        return ip_address(value.strip())  # canonical form from here on
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address") from None


IP_SCHEMA = {
    "anyOf": [
        {"type": "string", "format": "ipv4"},
        {"type": "string", "format": "ipv6"},
    ]
}
IP = Annotated[
    IPv4Address | IPv6Address,
    PlainValidator(_ip),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(IP_SCHEMA),
]
Ttl = Annotated[int, Field(ge=0, le=604800)]
Port = Annotated[int, Field(ge=1, le=65535)]
Rank = Annotated[int, Field(ge=1, le=1000)]
# 0 is standby: served only when no endpoint with a weight is (Route 53).
Weight = Annotated[int, Field(ge=0, le=1000)]
LABEL_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$"
# A DNS name as names.absolute() takes it: labels of letters, digits, "_" and
# inner "-", dot-separated, an optional trailing dot; the root alone is not one.
_DNS_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
NAME_PATTERN = rf"^(?:{_DNS_LABEL}\.)*{_DNS_LABEL}\.?$"
DnsName = Annotated[str, Field(pattern=NAME_PATTERN, max_length=254)]
# Text that goes on the wire of a probe (an HTTP header, a SIP line): printable
# characters only, so no value can end a line and smuggle in another header.
PRINTABLE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
HEADER_NAME_PATTERN = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"  # an RFC 9110 token
SERVICE_PATTERN = r"^_[A-Za-z0-9-]{1,62}\._[A-Za-z0-9-]{1,62}$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


M = TypeVar("M", bound=BaseModel)


def from_json(model: type[M], data: Any) -> M:
    """`data` (a parsed JSON or YAML document) validated with JSON's own types:
    a number must be a number and a boolean a boolean ("3" and true are no
    weight), NaN and Infinity are refused. Every body and file goes through
    here; query strings, which are text, do not."""
    return model.model_validate_json(json.dumps(data, default=str), strict=True)


def dns_name(value: str) -> str:
    """The absolute form of a DNS name; a bad name is a ValueError in words."""
    try:
        return names.absolute(value)
    except names.BadName as exc:
        raise ValueError(str(exc)) from exc


def _geo_code(value: str) -> str:
    """WORLD, a continent as GEO-EU (Azure's spelling), an ISO 3166-1 country or
    an ISO 3166-2 subdivision; anything else is refused with the reason."""
    code = value.strip().upper()
    if code == geo.WORLD:
        return code
    if code.startswith(geo.CONTINENT_PREFIX):
        if code.removeprefix(geo.CONTINENT_PREFIX) in geo.CONTINENTS:
            return code
        raise ValueError(
            f"{value!r}: continents are "
            + ", ".join(geo.CONTINENT_PREFIX + c for c in sorted(geo.CONTINENTS))
        )
    found = _iso_lookup(code)
    if found is None:
        raise ValueError(
            f"{value!r} is not WORLD, GEO-<continent>, an ISO 3166-1 "
            "country or an ISO 3166-2 subdivision"
        )
    return code


def _iso_lookup(code: str) -> object:
    """pycountry's ISO 3166-2 table for subdivisions, ISO 3166-1 for countries."""
    if "-" in code:
        return pycountry.subdivisions.get(code=code)  # type: ignore[no-untyped-call]
    return pycountry.countries.get(alpha_2=code)


def _subnet(value: str) -> str:
    return parse_range(value).text


GeoCode = Annotated[str, AfterValidator(_geo_code)]
Subnet = Annotated[str, AfterValidator(_subnet)]


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """RFC 7396 JSON merge patch: objects merge, null removes, the rest replaces."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged
