"""Documentation-only response models, and the shared error and header components."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.api.openapi.refs import Schema, header, json_content, ref
from app.domain.model import HealthState, Quorum

# Response shapes that are plain dicts in the handlers, described here only.


class FieldProblem(BaseModel):
    field: str = Field(
        description="a dotted body path (`endpoints.1.weight`), a query parameter "
        "or a header; empty for the body as a whole"
    )
    message: str


class ErrorInfo(BaseModel):
    code: str = Field(
        description="machine-readable: bad_json, unauthorized, forbidden, not_found, "
        "conflict, precondition_failed, unsupported_media_type, invalid, "
        "store_unavailable, …"
    )
    message: str = Field(description="what went wrong, in words")
    details: list[FieldProblem]


class Error(BaseModel):
    """The envelope of every error response."""

    error: ErrorInfo


class VantageView(BaseModel):
    """One prober's own view of an endpoint."""

    vantage: str = Field(examples=["eu-west-1"])
    state: HealthState = Field(description="after this vantage's own tolerances")
    reason: str = Field(examples=["HTTP 503 Service Unavailable in 3 ms"])
    latency_ms: float | None
    checked_at: datetime | None
    voting: bool = Field(
        description="its heartbeat is fresh, so this view counts in the quorum"
    )


class Vantage(BaseModel):
    """A prober instance (TMDNS_PROBER__VANTAGE) and its heartbeat."""

    name: str
    seen_at: datetime = Field(description="its last heartbeat")
    stale: bool = Field(description="no heartbeat for over 5 s")
    voting: bool = Field(
        description="its views counted at the last decision (a stale vantage "
        "stops voting once another vantage notices; with none left, the last "
        "decision stands)"
    )
    source: str | None = Field(description="the address its probes leave from")


class EndpointHealth(BaseModel):
    name: str
    state: HealthState | None = Field(description="as DNS answers now")
    since: datetime | None = Field(description="in this state since")
    reason: str | None = Field(
        description="the last verdict in words", examples=["connection refused"]
    )
    latency_ms: float | None
    checked_at: datetime | None = Field(description="time of the last verdict")
    stale: bool = Field(description="the prober has not reported for 3 intervals")
    quorum: Quorum = Field(description="how the vantages' views make the state")
    vantages: list[VantageView] = Field(description="each prober's own view")


class Transition(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    endpoint: str
    at: datetime
    from_: HealthState = Field(alias="from")
    to: HealthState
    reason: str


class ProfileHealth(BaseModel):
    """Every endpoint's health, and the latest transitions (newest first)."""

    profile: str = Field(description="the profile's absolute name")
    endpoints: list[EndpointHealth]
    transitions: list[Transition] = Field(max_length=50)


class TrafficMinute(BaseModel):
    at: int = Field(description="the minute's start, epoch seconds")
    queries: int = Field(description="queries for the profile's names")
    answers: dict[str, int] = Field(
        description="per endpoint, the replies that handed it out"
    )


class ProfileTraffic(BaseModel):
    """A profile's traffic per minute, oldest first, every minute listed."""

    profile: str = Field(description="the profile's absolute name")
    minutes: list[TrafficMinute]


class Whoami(BaseModel):
    """The token that made the call."""

    name: str
    scope: Literal["read", "write"]


class ClientLocation(BaseModel):
    continent: str | None = Field(examples=["EU"])
    country: str | None = Field(examples=["DE"])
    subdivision: str | None = Field(examples=["DE-BY"])
    lat: float | None
    lon: float | None
    network_prefix: int = Field(description="length of the client's GeoIP network")


class RecordText(BaseModel):
    name: str
    type: str = Field(examples=["A"])
    ttl: int
    data: str = Field(description="the record data in presentation format")


class EndpointVerdict(BaseModel):
    name: str
    state: HealthState
    stale: bool
    vantages: list[VantageView] = Field(
        description="each prober's own view (empty while the database is away)"
    )


class Explanation(BaseModel):
    """The answer tmdns would give, and why."""

    name: str
    type: str
    client: str | None
    client_location: ClientLocation | None = Field(description="the GeoIP facts")
    rcode: str = Field(examples=["NOERROR"])
    answer: list[RecordText]
    authority: list[RecordText]
    additional: list[RecordText]
    ecs_scope: int = Field(description="the ECS scope prefix of the reply")
    endpoints: list[EndpointVerdict]
    why: list[str] = Field(description="each step of the resolution, in words")
    generation: int = Field(description="the configuration generation answered from")


class AuditEntry(BaseModel):
    """One change, as the audit log keeps it."""

    id: int
    at: datetime = Field(description="when (ISO 8601, UTC)")
    actor: str = Field(description="the name of the token that made the change")
    action: str = Field(examples=["profile.update"])
    resource: str = Field(examples=["tm.example./app"])
    before: Any = Field(description="the resource before the change; null if new")
    after: Any = Field(description="the resource after the change; null if deleted")


class Healthz(BaseModel):
    snapshot_generation: int
    snapshot_age_seconds: float
    prober_last_report_seconds: float | None
    prober: Literal["ok", "stale"]
    database: Literal["ok", "unreachable"]


ERRORS = {
    400: ("BadRequest", "The body is not JSON, or not a JSON object (`bad_json`)."),
    401: ("Unauthorized", "No valid bearer token (`unauthorized`)."),
    403: ("Forbidden", "The token may only read (`forbidden`)."),
    404: ("NotFound", "The zone, profile or endpoint does not exist (`not_found`)."),
    409: (
        "Conflict",
        "The change collides with existing data: a duplicate name, or a profile "
        "still used as a nested child (`conflict`).",
    ),
    412: (
        "PreconditionFailed",
        "If-Match does not match the current ETag: the resource changed since it "
        "was read (`precondition_failed`).",
    ),
    413: (
        "PayloadTooLarge",
        "The body is over 1 MiB (`request_entity_too_large`).",
    ),
    415: (
        "UnsupportedMediaType",
        "The body is not `application/json` (`unsupported_media_type`).",
    ),
    422: (
        "Unprocessable",
        "A field or parameter is invalid (`invalid`); `details` names each one by "
        "its path, e.g. `endpoints.1.weight`. A rejected change writes nothing.",
    ),
    503: ("Unavailable", "The database is unreachable (`store_unavailable`)."),
}
READ_ERRORS = (401, 404, 503)
WRITE_ERRORS = (400, 401, 403, 404, 409, 413, 415, 422, 503)


def error_ref(status: int) -> Schema:
    return {"$ref": "#/components/responses/" + ERRORS[status][0]}


def headers() -> dict[str, Schema]:
    return {
        "ETag": {
            "description": "The resource's version, for If-Match",
            "schema": {"type": "string"},
        },
        "X-Tmdns-Generation": {
            "description": "The configuration generation holding the change (also "
            "the SOA serial)",
            "schema": {"type": "integer"},
        },
        "X-Total-Count": {
            "description": "How many match the filters, before limit and offset",
            "schema": {"type": "integer", "minimum": 0},
        },
        "WWW-Authenticate": {
            "description": '`Bearer realm="tmdns"`',
            "schema": {"type": "string"},
        },
    }


def responses() -> dict[str, Schema]:
    out: dict[str, Schema] = {}
    for status, (name, description) in sorted(ERRORS.items()):
        out[name] = {"description": description, "content": json_content(ref("Error"))}
        if status == 401:
            out[name]["headers"] = {"WWW-Authenticate": header("WWW-Authenticate")}
    return out
