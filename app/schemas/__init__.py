"""The external shape of tmdns (REST API, and export/import), in pydantic.

Field names are exactly those of DESIGN §6. Each input model converts to the
domain with to_domain(); each output model is built with from_domain().
Unknown fields are rejected, so a typo is a 422 naming it, not a silent no-op.
"""

from app.schemas.common import (
    IP,
    LABEL_PATTERN,
    SERVICE_PATTERN,
    GeoCode,
    Port,
    Rank,
    Strict,
    Subnet,
    Ttl,
    from_json,
    merge_patch,
)
from app.schemas.documents import endpoint_document, profile_document, zone_document
from app.schemas.endpoints import (
    EndpointIn,
    EndpointOut,
    EndpointPage,
    LocationIn,
    OverrideIn,
)
from app.schemas.latency import LatencyEntryIn, LatencyIn
from app.schemas.monitor import MonitorIn
from app.schemas.profiles import ProfileIn, ProfileOut, SrvIn
from app.schemas.zones import ZoneIn, ZoneOut

__all__ = [
    "IP",
    "LABEL_PATTERN",
    "SERVICE_PATTERN",
    "EndpointIn",
    "EndpointOut",
    "EndpointPage",
    "GeoCode",
    "LatencyEntryIn",
    "LatencyIn",
    "LocationIn",
    "MonitorIn",
    "OverrideIn",
    "Port",
    "ProfileIn",
    "ProfileOut",
    "Rank",
    "SrvIn",
    "Strict",
    "Subnet",
    "Ttl",
    "ZoneIn",
    "ZoneOut",
    "endpoint_document",
    "from_json",
    "merge_patch",
    "profile_document",
    "zone_document",
]
