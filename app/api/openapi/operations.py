"""The table of paths and their operations."""

from __future__ import annotations

from dataclasses import dataclass

from app.api.openapi.refs import (
    Schema,
    header,
    json_content,
    many,
    name_of,
    param,
    ref,
)
from app.api.openapi.responses import READ_ERRORS, WRITE_ERRORS, error_ref
from app.api.openapi.schemas import Refs
from app.schemas import LatencyIn
from app.schemas.rrsets import RRsetIn, RRsetOut
from app.schemas.webhooks import DeliveryOut, WebhookIn, WebhookOut

PREFIX = "/api/v1"
ZONE = PREFIX + "/zones/{zone}"
PROFILE = ZONE + "/profiles/{profile}"
ENDPOINT = PROFILE + "/endpoints/{endpoint}"
CHANGED = "X-Tmdns-Generation"


def op(
    op_id: str,
    summary: str,
    tag: str,
    responses: dict[str, Schema],
    errors: tuple[int, ...] = (),
    description: str = "",
    parameters: tuple[str, ...] = (),
    body: Schema | None = None,
    secured: bool = True,
) -> Schema:
    operation: Schema = {"operationId": op_id, "summary": summary, "tags": [tag]}
    if description:
        operation["description"] = description
    if parameters:
        operation["parameters"] = [param(p) for p in parameters]
    if body is not None:
        operation["requestBody"] = {"required": True, "content": json_content(body)}
    for status in sorted(errors):
        responses[str(status)] = error_ref(status)
    operation["responses"] = responses
    operation["security"] = [{"bearerAuth": []}] if secured else []
    return operation


def ok(
    status: int, description: str, schema: Schema | None = None, *headers: str
) -> dict[str, Schema]:
    response: Schema = {"description": description}
    if headers:
        response["headers"] = {h: header(h) for h in headers}
    if schema is not None:
        response["content"] = json_content(schema)
    return {str(status): response}


@dataclass(frozen=True, slots=True)
class _Resource:
    """One kind of resource, and the words its operations are spelled with."""

    kind: str
    parents: tuple[str, ...]

    @property
    def noun(self) -> str:
        return self.kind.lower()

    @property
    def tag(self) -> str:
        return self.noun + "s"

    @property
    def article(self) -> str:
        return "an" if self.noun[0] in "aeiou" else "a"

    @property
    def single(self) -> tuple[str, ...]:
        return (*self.parents, self.noun)


def resource_paths(
    kind: str, collection: str, item: str, parents: tuple[str, ...], refs: Refs
) -> dict[str, Schema]:
    """List, create, read, patch and delete one kind of resource."""
    resource = _Resource(kind, parents)
    return {
        collection: _collection_ops(resource, refs),
        item: _item_ops(resource, refs),
    }


def _collection_ops(r: _Resource, refs: Refs) -> Schema:
    out = refs.result(r.kind)
    create_errors = tuple(e for e in WRITE_ERRORS if r.parents or e != 404)
    return {
        "get": _list_op(r, out),
        "post": op(
            f"create{r.kind}",
            f"Create {r.article} {r.noun}",
            r.tag,
            ok(201, f"The {r.noun} created", out, CHANGED),
            create_errors,
            parameters=r.parents,
            body=refs.body(r.kind),
        ),
    }


def _list_op(r: _Resource, out: Schema) -> Schema:
    """The endpoint list is filtered and paged; the others list everything."""
    params = r.parents
    headers: tuple[str, ...] = ()
    errors: tuple[int, ...] = READ_ERRORS if r.parents else (401, 503)
    description = ""
    if r.kind == "Endpoint":
        params = (*r.parents, "limit", "offset", "state", "enabled")
        headers = ("X-Total-Count",)
        errors = (*READ_ERRORS, 422)
        description = "Filtered by `state` and `enabled`, then paged."
    return op(
        f"list{r.kind}s",
        f"List {r.noun}s",
        r.tag,
        ok(200, f"The {r.noun}s", many(out), *headers),
        errors,
        description,
        params,
    )


def _item_ops(r: _Resource, refs: Refs) -> Schema:
    out, body = refs.result(r.kind), refs.body(r.kind)
    return {
        "get": op(
            f"get{r.kind}",
            f"Read {r.article} {r.noun}",
            r.tag,
            ok(200, f"The {r.noun}", out, "ETag"),
            READ_ERRORS,
            parameters=r.single,
        ),
        "patch": op(
            f"patch{r.kind}",
            f"Change {r.article} {r.noun} (JSON merge patch)",
            r.tag,
            ok(200, f"The {r.noun} changed", out, CHANGED),
            (*WRITE_ERRORS, 412),
            f"The body is a JSON merge patch (RFC 7396) of {name_of(body['$ref'])}, "
            "sent as `application/json`: objects merge, null removes a member.",
            (*r.single, "If-Match"),
            refs.patch(r.kind),
        ),
        "delete": op(
            f"delete{r.kind}",
            f"Delete {r.article} {r.noun}",
            r.tag,
            {"204": {"description": "Deleted", "headers": {CHANGED: header(CHANGED)}}},
            (401, 403, 404, 409, 412, 503) + ((422,) if r.kind == "Endpoint" else ()),
            parameters=(*r.single, "If-Match"),
        ),
    }


def paths(refs: Refs) -> dict[str, Schema]:
    out: dict[str, Schema] = {}
    out |= resource_paths("Zone", PREFIX + "/zones", ZONE, (), refs)
    out |= resource_paths("Profile", ZONE + "/profiles", PROFILE, ("zone",), refs)
    out[PROFILE + "/health"] = {"get": _health_op()}
    out[PROFILE + "/traffic"] = {"get": _traffic_op()}
    out |= _rrset_paths(refs)
    parents = ("zone", "profile")
    out |= resource_paths("Endpoint", PROFILE + "/endpoints", ENDPOINT, parents, refs)
    out[PREFIX + "/explain"] = {"get": _explain_op()}
    out[PREFIX + "/latency"] = _latency_ops(refs)
    out[PREFIX + "/audit"] = {"get": _audit_op()}
    out[PREFIX + "/vantages"] = {"get": _vantages_op()}
    out[PREFIX + "/events"] = {"get": _events_op()}
    out[PREFIX + "/whoami"] = {"get": _whoami_op()}
    out |= _webhook_paths(refs)
    return out | _document_paths() | _service_paths()


def _health_op() -> Schema:
    return op(
        "getProfileHealth",
        "Health of a profile's endpoints",
        "profiles",
        ok(200, "States, last verdicts and transitions", ref("ProfileHealth")),
        READ_ERRORS,
        "Each endpoint's state as DNS answers now, the decided last verdict "
        "and whether it is stale, each vantage's own view with whether it "
        "votes, and the 50 latest transitions of the decided state.",
        ("zone", "profile"),
    )


def _rrset_paths(refs: Refs) -> dict[str, Schema]:
    out = refs.of(RRsetOut, "serialization")
    one = ZONE + "/rrsets/{name}/{type}"
    return {
        ZONE + "/rrsets": {
            "get": op(
                "listRRsets",
                "List a zone's static rrsets",
                "zones",
                ok(200, "Every static rrset, by name and type", many(out)),
                READ_ERRORS,
                parameters=("zone",),
            )
        },
        one: {
            "get": op(
                "getRRset",
                "Read a static rrset",
                "zones",
                ok(200, "The rrset", out, "ETag"),
                (*READ_ERRORS, 422),
                parameters=("zone", "rrsetName", "rrsetType"),
            ),
            "put": op(
                "putRRset",
                "Set a static rrset (replacing any of its name and type)",
                "zones",
                ok(200, "Replaced", out, CHANGED, "ETag")
                | ok(201, "Created", out, CHANGED, "ETag"),
                (*WRITE_ERRORS, 412),
                "Records in presentation format, names in them relative to the "
                "zone as in a zone file; each is parsed and refused naming it "
                "(`records.2`). A name owned by a profile, an endpoint or a name "
                "server cannot have static records; a CNAME stands alone; NS "
                "below the apex delegates (answers below it become referrals) "
                "and needs A/AAAA glue first for name servers inside it. Live in "
                "DNS within the refresh interval (0.2 s). If-Match takes the ETag "
                "a PUT returned.",
                ("zone", "rrsetName", "rrsetType", "If-Match", "If-None-Match"),
                refs.of(RRsetIn, "validation"),
            ),
            "delete": op(
                "deleteRRset",
                "Remove a static rrset",
                "zones",
                {
                    "204": {
                        "description": "Removed",
                        "headers": {CHANGED: header(CHANGED)},
                    }
                },
                (401, 403, 404, 412, 422, 503),
                parameters=("zone", "rrsetName", "rrsetType", "If-Match"),
            ),
        },
    }


def _traffic_op() -> Schema:
    return op(
        "getProfileTraffic",
        "A profile's queries and answer split per minute",
        "profiles",
        ok(200, "Every minute of the window, oldest first", ref("ProfileTraffic")),
        (*READ_ERRORS, 422),
        "Summed over every DNS process, each adding its counts every "
        "`TMDNS_DNS__TRAFFIC_INTERVAL` (10 s), so the last minutes fill in "
        "behind; the same counts as tmdns_dns_queries_total and "
        "tmdns_dns_answers_total. A day is kept.",
        ("zone", "profile", "minutes"),
    )


def _whoami_op() -> Schema:
    return op(
        "whoami",
        "The calling token's name and scope",
        "meta",
        ok(200, "The token", ref("Whoami")),
        (401, 503),
    )


def _vantages_op() -> Schema:
    return op(
        "listVantages",
        "The probers and their heartbeats",
        "health",
        ok(200, "Every vantage, by name", many(ref("Vantage"))),
        (401, 503),
        "A vantage whose heartbeat is older than 5 s stops voting: the endpoint "
        "states are then decided over the others.",
    )


def _events_op() -> Schema:
    return op(
        "streamEvents",
        "Stream what happens (server-sent events)",
        "events",
        _text(
            "An endless text/event-stream: `id`, `event` (the kind) and `data`, "
            "a JSON object with id, at, kind, subject and data",
            "text/event-stream",
        ),
        (401, 422),
        "Kinds: `config` (every audited change: data action, actor), `health` "
        "(the decided state of an endpoint: zone, profile, endpoint, from, to, "
        "reason), `vantage_health` (one vantage's view, with its vantage), "
        "`vantage` (a prober went quiet or came back: vantage, voting, "
        "seen_at), `override` (one started, changed, ended or ran out: zone, "
        "profile, endpoint, change, state, reason, until, actor), `quarantine` "
        "(a profile stopped reading, or reads again: zone, profile, "
        "quarantined, reason, kept), `prober` (every prober silent, or one "
        "back: state stale or ok). Without `Last-Event-ID` (header, or the "
        "`last_event_id` query parameter for clients that cannot set headers) "
        "the stream starts with the next event; with it, after that event, "
        "from a backlog of the newest 10,000; an id older than the backlog "
        "first gets a `gap` event (after, resumes_at).",
        ("Last-Event-ID", "last_event_id"),
    )


def _webhook_paths(refs: Refs) -> dict[str, Schema]:
    hook = refs.of(WebhookOut, "serialization")
    one = PREFIX + "/webhooks/{webhook}"
    return {
        PREFIX + "/webhooks": {
            "get": op(
                "listWebhooks",
                "List the webhooks",
                "webhooks",
                ok(200, "Every webhook (never its secret)", many(hook)),
                (401, 503),
            ),
            "post": op(
                "createWebhook",
                "Add a webhook",
                "webhooks",
                ok(201, "Added; its first delivery is its own creation", hook, CHANGED),
                (400, 401, 403, 413, 415, 422, 503),
                "Events of the kinds asked are POSTed as JSON (the event stream's "
                "data), in order, signed with `X-Tmdns-Signature: sha256=<HMAC-"
                "SHA256 of the body with the secret>`, with `X-Tmdns-Event` and "
                "`X-Tmdns-Event-Id`; a status other than 2xx (redirects are not "
                "followed) or none within 5 s is retried after 0.5 s, doubling to a "
                "minute, 10 tries in all. The URL is fetched from the API host.",
                body=refs.of(WebhookIn, "validation"),
            ),
        },
        one: {
            "get": op(
                "getWebhook",
                "Read a webhook",
                "webhooks",
                ok(200, "The webhook", hook, "ETag"),
                (401, 404, 422, 503),
                parameters=("webhook",),
            ),
            "delete": op(
                "deleteWebhook",
                "Delete a webhook",
                "webhooks",
                {
                    "204": {
                        "description": "Deleted; no more deliveries",
                        "headers": {CHANGED: header(CHANGED)},
                    }
                },
                (401, 403, 404, 412, 422, 503),
                parameters=("webhook", "If-Match"),
            ),
        },
        one + "/deliveries": {
            "get": op(
                "listWebhookDeliveries",
                "A webhook's delivery log",
                "webhooks",
                ok(
                    200,
                    "The latest 100 tries, newest first",
                    many(refs.of(DeliveryOut, "serialization")),
                ),
                (401, 404, 422, 503),
                parameters=("webhook",),
            )
        },
    }


def _explain_op() -> Schema:
    return op(
        "explainAnswer",
        "Explain the answer a client would get",
        "explain",
        ok(200, "The answer and how it was reached", ref("Explanation")),
        (401, 422),
        "Runs the same resolution as the DNS server and reports the answer, the "
        "client's GeoIP facts, every endpoint with its state, why skipped ones "
        "were skipped, the rule that matched and the ECS scope.",
        ("name", "type", "client", "prefix"),
    )


def _latency_ops(refs: Refs) -> Schema:
    latency = refs.of(LatencyIn, "serialization")
    return {
        "get": op(
            "getLatency",
            "Read the latency table",
            "latency",
            ok(200, "The latency table", latency),
            (401, 503),
        ),
        "put": op(
            "putLatency",
            "Replace the latency table",
            "latency",
            ok(200, "The table now in force", latency, CHANGED),
            (400, 401, 403, 413, 415, 422, 503),
            "Performance routing ranks locations by this table when it covers the "
            "client (most specific network wins), else by great-circle distance.",
            body=refs.of(LatencyIn, "validation"),
        ),
    }


def _audit_op() -> Schema:
    return op(
        "listAudit",
        "Read the audit log",
        "audit",
        ok(200, "Changes, newest first", many(ref("AuditEntry"))),
        (401, 422, 503),
        parameters=("resource", "actor", "since", "until", "audit_limit"),
    )


def _text(description: str, media_type: str) -> dict[str, Schema]:
    """A 200 response that is text, not JSON."""
    return {
        "200": {
            "description": description,
            "content": {media_type: {"schema": {"type": "string"}}},
        }
    }


def _document_paths() -> dict[str, Schema]:
    """This document and its browsable rendering: open to all."""
    return {
        PREFIX + "/openapi.json": {
            "get": op(
                "getOpenapi",
                "This OpenAPI document",
                "meta",
                ok(200, "The OpenAPI 3.1 document", {"type": "object"}),
                secured=False,
            )
        },
        PREFIX + "/docs": {
            "get": op(
                "getDocs",
                "Browsable API reference",
                "meta",
                _text("An HTML page rendering this document", "text/html"),
                secured=False,
            )
        },
    }


def _service_paths() -> dict[str, Schema]:
    """Health check and metrics for the operators' tools: open to all."""
    healthz = ref("Healthz")
    return {
        "/healthz": {
            "get": op(
                "healthz",
                "Is this instance fit to serve",
                "meta",
                ok(200, "Healthy", healthz)
                | ok(
                    503, "The database is unreachable or the prober is silent", healthz
                ),
                description="200 when the database answers and, if anything is "
                "probed, the prober has reported within 3 of the shortest probe "
                "interval.",
                secured=False,
            )
        },
        "/metrics": {
            "get": op(
                "metrics",
                "Prometheus metrics",
                "meta",
                _text("The Prometheus text exposition format", "text/plain"),
                secured=False,
            )
        },
    }
