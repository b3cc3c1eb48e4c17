"""Azure Traffic Manager profiles as a tmdns document, for moving off Azure.

from_azure() reads either what `az network traffic-manager profile show` (or
`... profile list`, or the REST API) prints, or an ARM template (`az group
export`, or a hand-written one) whose resources include
Microsoft.Network/trafficManagerProfiles, with endpoints inline or as their
own .../externalEndpoints, azureEndpoints and nestedEndpoints resources. In a
template, `[parameters('x')]` (its defaultValue), `[variables('x')]`,
`concat`, `toLower` and `resourceId` are evaluated; other expressions are not.

The result is a document for transfer.load() with one zone entry that names
an existing zone (no `ns`), and a list of what could not be carried over, in
words, naming the profile, endpoint and field: nothing is dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from ipaddress import ip_address
from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.domain import names
from app.domain.regions import region_coordinates
from app.schemas import GeoCode, ProfileIn, Subnet
from app.transfer import VERSION, profile_entry


class AzureError(ValueError):
    """The input is not something a Traffic Manager profile can be read from."""


_METHODS = {
    "priority": "priority",
    "weighted": "weighted",
    "performance": "performance",
    "geographic": "geographic",
    "multivalue": "multivalue",
    "subnet": "subnet",
}
_PROTOCOLS = {"HTTP": "http", "HTTPS": "https", "TCP": "tcp"}
# Azure's geographic codes that are not tmdns codes but have an equivalent:
# Azure's "Australia / Pacific" is the Oceania of GeoIP continents.
_GEO_CODES = {"GEO-AP": "GEO-OC"}
_GEO_HINTS = {
    "GEO-ME": "Azure's Middle East region has no tmdns code: list its countries",
}
_PROFILE_TYPE = "microsoft.network/trafficmanagerprofiles"
_ENDPOINT_TYPES = {
    "externalendpoints": "externalEndpoints",
    "azureendpoints": "azureEndpoints",
    "nestedendpoints": "nestedEndpoints",
}
_QUIET_MONITOR_STATES = {"online", "checkingendpoint", "disabled"}

# Fields that say where a resource is, not what it does: read past in silence.
_IDENTITY = frozenset(
    {
        "id",
        "name",
        "type",
        "location",
        "resourceGroup",
        "apiVersion",
        "dependsOn",
        "comments",
        "condition",
        "etag",
        "systemData",
        "properties",
        "resources",
    }
)
_PROFILE_FIELDS = _IDENTITY | {
    "tags",
    "profileStatus",
    "trafficRoutingMethod",
    "dnsConfig",
    "monitorConfig",
    "endpoints",
    "trafficViewEnrollmentStatus",
    "allowedEndpointRecordTypes",
    "maxReturn",
}
_MONITOR_FIELDS = frozenset(
    {
        "profileMonitorStatus",
        "protocol",
        "port",
        "path",
        "intervalInSeconds",
        "timeoutInSeconds",
        "toleratedNumberOfFailures",
        "customHeaders",
        "expectedStatusCodeRanges",
    }
)
_ENDPOINT_FIELDS = _IDENTITY | {
    "target",
    "targetResourceId",
    "endpointStatus",
    "endpointMonitorStatus",
    "weight",
    "priority",
    "endpointLocation",
    "geoMapping",
    "subnets",
    "minChildEndpoints",
    "minChildEndpointsIPv4",
    "minChildEndpointsIPv6",
    "customHeaders",
    "alwaysServe",
}
_geo_code: TypeAdapter[str] = TypeAdapter(GeoCode)
_subnet: TypeAdapter[str] = TypeAdapter(Subnet)


@dataclass
class _Source:
    """One Traffic Manager profile as read: its fields and its endpoints',
    each endpoint flattened (its `properties` merged into it)."""

    name: str
    fields: dict[str, Any]
    endpoints: list[dict[str, Any]] = field(default_factory=list)


def from_azure(text: str, zone: str) -> tuple[dict[str, Any], list[str]]:
    """The Traffic Manager profiles in `text` as a document for `zone` (an
    existing zone: the entry has no `ns`), and the lines of what was not
    mapped. Profiles are named by their Azure resource name, so a nested
    endpoint's child (the last segment of its targetResourceId) finds them."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AzureError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    try:
        zone_name = names.absolute(zone)
    except names.BadName as exc:
        raise AzureError(str(exc)) from None
    unmapped: list[str] = []
    sources = _sources(data, unmapped)
    if not sources:
        raise AzureError(
            "no Traffic Manager profile found: give the output of `az network "
            "traffic-manager profile show` or an ARM template with a "
            "Microsoft.Network/trafficManagerProfiles resource"
        )
    converter = _Converter(unmapped)
    profiles = [converter.profile(s) for s in sources]
    converter.note_absent_children({str(p["name"]) for p in profiles})
    document = {
        "version": VERSION,
        "zones": [
            {
                "name": zone_name,
                "profiles": sorted(profiles, key=lambda p: str(p["name"])),
            }
        ],
    }
    return document, unmapped


# --- reading the input -----------------------------------------------------------


def _sources(data: Any, unmapped: list[str]) -> list[_Source]:
    if isinstance(data, list):  # `az network traffic-manager profile list`
        return [s for item in data for s in _sources(item, unmapped)]
    if not isinstance(data, dict):
        return []
    if "resources" in data:
        return _template(_Expressions(data).resolve(data), unmapped)
    fields = _flat(data)
    if "trafficRoutingMethod" not in fields:
        return []
    return [_Source(str(data.get("name") or ""), fields, _endpoint_list(fields))]


def _flat(item: dict[str, Any]) -> dict[str, Any]:
    """A resource's fields with its `properties` lifted beside its name and type."""
    properties = item.get("properties")
    if isinstance(properties, dict):
        return {**item, **properties}
    return dict(item)


def _endpoint_list(fields: dict[str, Any]) -> list[dict[str, Any]]:
    endpoints = fields.get("endpoints") or []
    return [_flat(e) for e in endpoints if isinstance(e, dict)]


def _kind_of(resource_type: Any) -> str:
    return str(resource_type or "").rsplit("/", 1)[-1].lower()


def _template(template: dict[str, Any], unmapped: list[str]) -> list[_Source]:
    """Profiles of an ARM template, with endpoints given as resources of their
    own (`profile/endpoint` at the top, or children of the profile) added."""
    profiles: dict[str, _Source] = {}
    loose: list[tuple[str, dict[str, Any]]] = []
    for resource, parent in _resources(template.get("resources"), None):
        kind = str(resource.get("type") or "").lower()
        name = str(resource.get("name") or "")
        if kind == _PROFILE_TYPE:
            fields = _flat(resource)
            profiles[name.lower()] = _Source(name, fields, _endpoint_list(fields))
        elif _kind_of(kind) in _ENDPOINT_TYPES and (
            parent is not None or kind.startswith(_PROFILE_TYPE + "/")
        ):
            owner, _, endpoint = name.rpartition("/")
            endpoint_fields = _flat(resource) | {"name": endpoint}
            loose.append(((parent or owner).lower(), endpoint_fields))
    for owner, endpoint_fields in loose:
        if owner in profiles:
            profiles[owner].endpoints.append(endpoint_fields)
        else:
            unmapped.append(
                f"endpoint {endpoint_fields['name']!r}: its profile {owner!r} is "
                "not in the template"
            )
    return list(profiles.values())


def _resources(
    resources: Any, parent: str | None
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every resource with the name of the profile it is nested in, if any.
    Templates of languageVersion 2.0 give resources as a mapping."""
    items = resources.values() if isinstance(resources, dict) else resources or []
    for resource in items:
        if not isinstance(resource, dict):
            continue
        yield resource, parent
        if str(resource.get("type") or "").lower() == _PROFILE_TYPE:
            yield from _resources(resource.get("resources"), str(resource.get("name")))


class _Unsupported(Exception):
    """An ARM expression this module does not evaluate."""


class _Expressions:
    """The little of ARM's template language that names and ids are made of."""

    _TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(-?\d+)|([A-Za-z_][\w.]*)|(.))")

    def __init__(self, template: dict[str, Any]) -> None:
        self.parameters = template.get("parameters") or {}
        self.variables = template.get("variables") or {}
        self.depth = 0

    def resolve(self, value: Any) -> Any:
        """`value` with every expression it can evaluate replaced by its result."""
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, str) and value.startswith("[["):
            return value[1:]  # an escaped literal bracket
        if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
            try:
                return self.evaluate(value[1:-1])
            except (_Unsupported, IndexError, KeyError, TypeError, RecursionError):
                return value
        return value

    def evaluate(self, text: str) -> Any:
        tokens = [m.groups() for m in self._TOKEN.finditer(text) if m.group().strip()]
        value, rest = self._value(tokens)
        if rest:
            raise _Unsupported(text)
        return value

    def _value(self, tokens: list[Any]) -> tuple[Any, list[Any]]:
        string, number, name, _ = tokens[0]
        if string is not None:
            return string[1:-1].replace("''", "'"), tokens[1:]
        if number is not None:
            return int(number), tokens[1:]
        if name is None or tokens[1][3] != "(":
            raise _Unsupported(name)
        args: list[Any] = []
        rest = tokens[2:]
        while rest[0][3] != ")":
            arg, rest = self._value(rest)
            args.append(arg)
            if rest[0][3] == ",":
                rest = rest[1:]
        return self._call(name.lower(), args), rest[1:]

    def _call(self, function: str, args: list[Any]) -> Any:
        if function == "parameters":
            spec = self.parameters[args[0]]
            if "defaultValue" not in spec:
                raise _Unsupported(args[0])
            return self._nested(spec["defaultValue"])
        if function == "variables":
            return self._nested(self.variables[args[0]])
        if function == "concat":
            return "".join(str(a) for a in args)
        if function == "tolower":
            return str(args[0]).lower()
        if function == "resourceid":  # type, then names: the last is the resource
            return "/".join(str(a) for a in args)
        raise _Unsupported(function)

    def _nested(self, value: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > 20:
                raise _Unsupported("too deep")
            return self.resolve(value)
        finally:
            self.depth -= 1


# --- mapping ---------------------------------------------------------------------


def _label(text: str) -> str:
    """One DNS label from an Azure name: lowercase, other characters as '-'."""
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    return cleaned[:63].rstrip("-_") or "endpoint"


def profile_name(azure_name: str) -> str:
    """The tmdns profile name of an Azure profile (and of a nested child)."""
    labels = [_label(part) for part in azure_name.split(".") if part]
    return ".".join(labels) or "profile"


def _empty(value: Any) -> bool:
    return value is None or value in ("", [], {})


def _expression(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("[") and value.endswith("]")


class _Converter:
    def __init__(self, unmapped: list[str]) -> None:
        self.unmapped = unmapped
        self.children: list[tuple[str, str]] = []  # (the endpoint, its child)

    def note(self, where: str, message: str) -> None:
        self.unmapped.append(f"{where}: {message}")

    def profile(self, source: _Source) -> dict[str, Any]:
        f = source.fields
        name = profile_name(source.name)
        where = f"profile {source.name!r}"
        if _expression(source.name) or not source.name:
            raise AzureError(
                f"a profile's name {source.name!r} cannot be evaluated here: give "
                "its parameters a defaultValue, or convert `az network "
                "traffic-manager profile show` output instead"
            )
        routing = str(f.get("trafficRoutingMethod") or "")
        method = _METHODS.get(routing.lower())
        if method is None:
            raise AzureError(
                f"{where}: trafficRoutingMethod {routing!r} is not one of "
                "Priority, Weighted, Performance, Geographic, MultiValue, Subnet"
            )
        body: dict[str, Any] = {"name": name, "method": method}
        if name != source.name:
            self.note(where, f"named {name!r} in tmdns (a DNS name)")
        self._dns(f.get("dnsConfig") or {}, source.name, body, where)
        if str(f.get("profileStatus") or "").lower() == "disabled":
            body["enabled"] = False
        if method == "multivalue" and f.get("maxReturn") is not None:
            body["max_return"] = f["maxReturn"]
        monitor = self._monitor(f.get("monitorConfig") or {}, where)
        if monitor:
            body["monitor"] = monitor
        self._profile_leftovers(f, where)
        taken: set[str] = set()
        endpoints = [
            self._endpoint(e, method, monitor, taken, where) for e in source.endpoints
        ]
        body["endpoints"] = [e for e in endpoints if e is not None]
        try:
            return profile_entry(ProfileIn.model_validate(body))
        except ValidationError as exc:
            for error in exc.errors():
                path = ".".join(str(p) for p in error["loc"])
                self.note(where, f"{path}: {error['msg']} (fix it in the document)")
            return body

    def _dns(
        self, dns: dict[str, Any], azure_name: str, body: dict[str, Any], where: str
    ) -> None:
        if dns.get("ttl") is not None:
            body["ttl"] = dns["ttl"]
        relative = dns.get("relativeName")
        if relative and str(relative).lower() != azure_name.lower():
            self.note(
                where,
                f"dnsConfig.relativeName {relative!r} ({relative}.trafficmanager.net)"
                f" is served as {body['name']}.<zone>: point its CNAMEs there",
            )

    def _profile_leftovers(self, f: dict[str, Any], where: str) -> None:
        if str(f.get("trafficViewEnrollmentStatus") or "").lower() == "enabled":
            self.note(where, "trafficViewEnrollmentStatus Enabled: no Traffic View")
        types = f.get("allowedEndpointRecordTypes") or []
        if types and [str(t).lower() for t in types] != ["any"]:
            self.note(
                where,
                f"allowedEndpointRecordTypes {types}: tmdns answers each query "
                "type from the endpoints of its family",
            )
        if f.get("tags"):
            self.note(where, f"tags {f['tags']} are not kept")
        self._unknown(f, _PROFILE_FIELDS, where)

    def _unknown(self, f: dict[str, Any], known: frozenset[str], where: str) -> None:
        for key, value in f.items():
            if key not in known and not _empty(value):
                self.note(where, f"{key} {json.dumps(value)} is not mapped")

    def _monitor(self, config: dict[str, Any], where: str) -> dict[str, Any]:
        monitor: dict[str, Any] = {}
        if not config:
            return monitor
        protocol = str(config.get("protocol") or "").upper()
        if protocol:
            if protocol in _PROTOCOLS:
                monitor["protocol"] = _PROTOCOLS[protocol]
            else:
                self.note(where, f"monitorConfig.protocol {protocol!r} is not mapped")
        if config.get("port") is not None:
            monitor["port"] = config["port"]
        if protocol in ("HTTP", "HTTPS") and config.get("path"):
            monitor["path"] = config["path"]
        interval = config.get("intervalInSeconds")
        if interval is not None:
            monitor["interval"] = interval
        if config.get("timeoutInSeconds") is not None:
            monitor["timeout"] = config["timeoutInSeconds"]
        elif isinstance(interval, int | float) and interval <= 10:
            monitor["timeout"] = max(interval - 1, 1)  # Azure's most for 10 s: 9 s
        if config.get("toleratedNumberOfFailures") is not None:
            monitor["tolerated_failures"] = config["toleratedNumberOfFailures"]
        self._headers(config.get("customHeaders"), monitor, where)
        ranges = config.get("expectedStatusCodeRanges") or []
        if ranges and protocol in ("HTTP", "HTTPS"):
            monitor["expected_status"] = ",".join(
                str(r.get("min"))
                if r.get("min") == r.get("max")
                else f"{r.get('min')}-{r.get('max')}"
                for r in ranges
            )
        self._unknown(config, _MONITOR_FIELDS, f"{where} monitorConfig")
        return monitor

    def _headers(self, headers: Any, monitor: dict[str, Any], where: str) -> None:
        """Azure's custom headers: `host` is the monitor's host, the rest headers."""
        for header in headers or []:
            name, value = str(header.get("name") or ""), header.get("value")
            if not name or value is None:
                self.note(where, f"custom header {header} is incomplete")
            elif name.lower() == "host":
                monitor["host"] = str(value)
            else:
                monitor["headers"] = {**monitor.get("headers", {}), name: str(value)}

    def _endpoint(
        self,
        e: dict[str, Any],
        method: str,
        monitor: dict[str, Any],
        taken: set[str],
        profile_where: str,
    ) -> dict[str, Any] | None:
        azure_name = str(e.get("name") or "")
        where = f"{profile_where} endpoint {azure_name!r}"
        kind = _kind_of(e.get("type")) or "externalendpoints"
        target: dict[str, Any] = {}
        if not self._target(e, kind, target, where):
            return None
        name = _label(azure_name)
        while name in taken:
            name = _label(f"{name[:60]}-{len(taken) + 1}")
        taken.add(name)
        if name != azure_name:
            self.note(where, f"named {name!r} in tmdns (one DNS label)")
        body: dict[str, Any] = {"name": name, **target}
        if str(e.get("endpointStatus") or "").lower() == "disabled":
            body["enabled"] = False
        if method == "priority" and e.get("priority") is not None:
            body["priority"] = e["priority"]
        if e.get("weight") is not None:
            body["weight"] = e["weight"]
        self._placement(e, method, body, where)
        if str(e.get("alwaysServe") or "").lower() == "enabled":
            body["always_serve"] = True
        if e.get("customHeaders"):
            own = {k: v for k, v in monitor.items() if k != "headers"}
            own["headers"] = dict(monitor.get("headers", {}))
            self._headers(e["customHeaders"], own, where)
            body["monitor"] = {k: v for k, v in own.items() if v != {}}
        self._endpoint_leftovers(e, where)
        return body

    def _placement(
        self,
        e: dict[str, Any],
        method: str,
        body: dict[str, Any],
        where: str,
    ) -> None:
        """Who the endpoint serves: geographic codes, subnets and location."""
        geo = self._geo(e.get("geoMapping") or [], where)
        if geo:
            body["geo"] = geo
        elif method == "geographic":
            self.note(where, "has no geographic code tmdns knows: it answers nobody")
        subnets = self._subnets(e.get("subnets") or [], where)
        if subnets:
            body["subnets"] = subnets
        location = e.get("endpointLocation")
        if location:
            region = "azure:" + re.sub(r"[\s_-]", "", str(location).lower())
            if region_coordinates(region) is None:
                self.note(where, f"endpointLocation {location!r} is not a known region")
            else:
                body["location"] = {"region": region}
        elif method == "performance":
            self.note(where, "has no endpointLocation: give it a location")

    def _target(
        self, e: dict[str, Any], kind: str, body: dict[str, Any], where: str
    ) -> bool:
        """Fill kind and target; False (and a note) when the endpoint cannot be."""
        if kind == "nestedendpoints":
            resource = str(e.get("targetResourceId") or "")
            if not resource or _expression(resource):
                self.note(where, "nestedEndpoints without a usable targetResourceId")
                return False
            child = profile_name(resource.rstrip("/").rsplit("/", 1)[-1])
            body.update(kind="nested", child=child)
            if e.get("minChildEndpoints") is not None:
                body["min_child_endpoints"] = e["minChildEndpoints"]
            self.children.append((where, child))
            return True
        if kind not in _ENDPOINT_TYPES:
            self.note(where, f"type {e.get('type')!r} is not an endpoint type")
            return False
        target = e.get("target")
        if _expression(target):
            self.note(
                where,
                f"target {target} is an expression that cannot be evaluated here: "
                "add the endpoint with its address or host name",
            )
            return False
        if not target:
            resource = e.get("targetResourceId") or "none"
            self.note(
                where,
                f"{_ENDPOINT_TYPES[kind]} without a target (targetResourceId "
                f"{resource}): add it with its address or host name",
            )
            return False
        try:
            body["address"] = str(ip_address(str(target)))
        except ValueError:
            try:
                body.update(kind="host", target=names.absolute(str(target)))
            except names.BadName as exc:
                self.note(where, f"target: {exc}")
                return False
        return True

    def _geo(self, codes: list[Any], where: str) -> list[str]:
        kept: list[str] = []
        for code in codes:
            text = str(code).strip().upper()
            try:
                kept.append(_geo_code.validate_python(_GEO_CODES.get(text, text)))
            except ValidationError:
                hint = _GEO_HINTS.get(text, "not a tmdns geographic code")
                self.note(where, f"geoMapping {code!r}: {hint}")
        return kept

    def _subnets(self, subnets: list[Any], where: str) -> list[str]:
        kept: list[str] = []
        for s in subnets:
            first, last, scope = s.get("first"), s.get("last"), s.get("scope")
            if first and scope is not None:
                text = f"{first}/{scope}"
            elif first and last:
                text = f"{first}-{last}"
            elif first:
                text = f"{first}-{first}"
            else:
                self.note(where, f"subnet {s} has no 'first' address")
                continue
            try:
                kept.append(_subnet.validate_python(text))
            except ValidationError as exc:
                message = exc.errors()[0]["msg"].removeprefix("Value error, ")
                self.note(where, f"subnets: {message}")
        return kept

    def _endpoint_leftovers(self, e: dict[str, Any], where: str) -> None:
        status = str(e.get("endpointMonitorStatus") or "")
        if status and status.lower() not in _QUIET_MONITOR_STATES:
            self.note(
                where,
                f"endpointMonitorStatus {status} is Azure's last verdict; tmdns "
                "probes afresh (the endpoint starts as checking)",
            )
        for key in ("minChildEndpointsIPv4", "minChildEndpointsIPv6"):
            if (e.get(key) or 0) > 1:
                self.note(where, f"{key} {e[key]}: tmdns counts children of any family")
        self._unknown(e, _ENDPOINT_FIELDS, where)

    def note_absent_children(self, converted: set[str]) -> None:
        for where, child in self.children:
            if child not in converted:
                self.note(
                    where,
                    f"nests profile {child!r}, which is not in this input: it must "
                    "exist in the zone (convert and import it too)",
                )
