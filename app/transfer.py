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

load() validates with the same pydantic models as the API and reports every
error at its line and column in the file; plan() diffs two configurations into
the Changes one store transaction applies; describe() words them.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

import yaml
from pydantic import Field, ValidationError, model_validator

from app.domain import names
from app.domain.model import (
    Config,
    EndpointKind,
    LatencyRows,
    Method,
    Profile,
    Zone,
)
from app.domain.regions import region_coordinates
from app.domain.validation import profile_problems, zone_problems
from app.schemas import (
    LatencyEntryIn,
    LatencyIn,
    ProfileIn,
    Strict,
    ZoneIn,
    ZoneOut,
    profile_document,
)

Format = Literal["yaml", "json"]
Action = Literal["create", "update", "delete"]
Kind = Literal["zone", "profile", "latency"]
Loc = tuple[str | int, ...]
VERSION = 1


class TransferError(ValueError):
    """The document cannot be used; one `file:line:col: field: message` per error."""

    def __init__(self, errors: str | Sequence[str]) -> None:
        self.errors = (errors,) if isinstance(errors, str) else tuple(errors)
        super().__init__("\n".join(self.errors))


# --- the document model ------------------------------------------------------


class ZoneEntry(ZoneIn):
    """A zone of the document: ZoneIn's fields and its profiles. Without `ns`
    the entry names an existing zone, whose settings are left as they are."""

    ns: list[str] = Field(default_factory=list, max_length=13)
    profiles: list[ProfileIn] = Field(default_factory=list)

    @model_validator(mode="after")
    def _settings_need_ns(self) -> Self:
        given = self.model_fields_set & {"soa_email", "negative_ttl", "glue"}
        if not self.ns and given:
            raise ValueError(
                f"{', '.join(sorted(given))} needs 'ns': a zone without 'ns' only "
                "names an existing zone"
            )
        return self


class Document(Strict):
    version: Literal[1]
    zones: list[ZoneEntry] = Field(default_factory=list)
    latency: list[LatencyEntryIn] = Field(default_factory=list)


def is_reference(zone: Zone) -> bool:
    """A zone from an entry without `ns`: an existing zone, its settings untouched."""
    return not zone.ns


def format_of(path: str) -> Format:
    """The format a file name implies: .json is JSON, anything else YAML."""
    return "json" if path.lower().endswith(".json") else "yaml"


# --- export --------------------------------------------------------------------


def export_document(config: Config) -> dict[str, Any]:
    """The configuration as a document: short (defaults left out), deterministic,
    without runtime fields (ids, fqdn, health state, the parked endpoint)."""
    document: dict[str, Any] = {
        "version": VERSION,
        "zones": [_zone_entry(z) for z in sorted(config.zones, key=lambda z: z.name)],
    }
    if config.latency:
        document["latency"] = [
            {"network": network, "rtt": dict(sorted(rtt.items()))}
            for network, rtt in config.latency
        ]
    tidy: dict[str, Any] = _tidy(document)
    return tidy


def _tidy(value: Any) -> Any:
    """Whole floats written as integers (`interval: 10`, not `10.0`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _tidy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def dump(document: Mapping[str, Any], fmt: Format) -> str:
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(
        dict(document), sort_keys=False, allow_unicode=True, width=4096
    )


def _zone_entry(zone: Zone) -> dict[str, Any]:
    if is_reference(zone):
        entry: dict[str, Any] = {"name": zone.name}
    else:
        entry = _zone_in(zone).model_dump(mode="json", exclude_defaults=True)
        if entry.get("soa_email") == _default_email(zone.name):
            del entry["soa_email"]
    profiles = sorted(zone.profiles, key=lambda p: p.name)
    if profiles:
        entry["profiles"] = [profile_entry(_profile_in(p, zone.name)) for p in profiles]
    return entry


def profile_entry(profile: ProfileIn) -> dict[str, Any]:
    """A profile as the document writes it: fields at their defaults left out,
    priorities left out when they are the 1, 2, 3… that listing order gives,
    and a location named by its region written as the region alone."""
    body = profile.model_dump(mode="json", exclude_defaults=True)
    endpoints: list[dict[str, Any]] = body.get("endpoints", [])
    if [e.get("priority") for e in endpoints] == list(range(1, len(endpoints) + 1)):
        for e in endpoints:
            del e["priority"]
    for e in endpoints:
        location = e.get("location")
        if location and location.get("region"):
            coordinates = region_coordinates(location["region"])
            if coordinates == (location.get("lat"), location.get("lon")):
                e["location"] = {"region": location["region"]}
    tidy: dict[str, Any] = _tidy(body)
    return tidy


def _default_email(zone: str) -> str:
    return f"hostmaster@{zone.rstrip('.')}"


def _zone_in(zone: Zone) -> ZoneIn:
    """ZoneIn with glue in a canonical order (name servers, then addresses)."""
    out = ZoneOut.from_domain(zone)
    glue = {
        host: sorted(addrs, key=lambda a: (a.version, int(a)))
        for host, addrs in sorted(out.glue.items())
    }
    return ZoneIn(
        name=out.name,
        ns=out.ns,
        soa_email=out.soa_email,
        negative_ttl=out.negative_ttl,
        glue=glue,
    )


def _profile_in(profile: Profile, zone: str) -> ProfileIn:
    return ProfileIn.model_validate(profile_document(profile, zone))


# --- load ----------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Node:
    """Where a value of the document is, and its children, for error positions."""

    line: int  # 1-based
    column: int  # 1-based
    keys: dict[str, tuple[_Node, _Node]] = field(default_factory=dict)  # key, value
    items: list[_Node] = field(default_factory=list)
    tag: str = ""  # YAML scalars: what an unquoted value was read as


def load(text: str, fmt: Format, source: str = "<document>") -> Config:
    """Parse and validate a document into a Config (ids 0, nothing parked).

    Raises TransferError naming, for each error, the line and column in the
    text and the field path: `tmdns.yaml:14:9: zones.0.profiles.1.endpoints.0
    .weight: Input should be greater than or equal to 1`.
    """
    data, tree, duplicates = (
        _parse_json(text, source) if fmt == "json" else _parse_yaml(text, source)
    )
    errors = [
        f"{source}:{again.line}:{again.column}: {path + ': ' if path else ''}"
        f"key {key!r} is repeated (first at line {first.line})"
        for path, key, first, again in duplicates
    ]
    try:
        document = Document.model_validate(data)
    except ValidationError as exc:
        errors += [_pydantic_error(e, tree, source) for e in exc.errors()]
    _raise_any(errors, source)
    zones = tuple(
        _zone_from(entry, ("zones", i), tree, source, errors)
        for i, entry in enumerate(document.zones)
    )
    # LatencyIn's own check for a network listed twice is _repeated_names'
    # (which names both lines), so the entries are not validated again here
    latency = LatencyIn.model_construct(entries=document.latency).to_domain()
    config = Config(zones=zones, latency=latency)
    _raise_any(errors, source)
    _raise_any(_repeated_names(config, tree, source), source)
    _raise_any(_domain_problems(config, tree, source), source)
    return config


def _raise_any(errors: list[str], source: str) -> None:
    """Raise the errors, if any, in the order of their places in the file."""

    def place(error: str) -> tuple[int, int]:
        line, column, _ = error[len(source) + 1 :].split(":", 2)
        return int(line), int(column)

    if errors:
        raise TransferError(sorted(errors, key=place))


def _zone_from(
    entry: ZoneEntry, at: Loc, tree: _Node, source: str, errors: list[str]
) -> Zone:
    zone = entry.to_domain()
    profiles: list[Profile] = []
    for j, p in enumerate(entry.profiles):
        try:
            profiles.append(p.to_domain(zone.name))
        except ValueError as exc:  # a name too long once joined to the zone's
            errors.append(_at(tree, (*at, "profiles", j, "name"), source, str(exc)))
    return replace(zone, profiles=tuple(profiles))


def _at(tree: _Node, loc: Loc, source: str, message: str) -> str:
    node = _locate(tree, loc)
    path = ".".join(str(part) for part in loc)
    return f"{source}:{node.line}:{node.column}: {path + ': ' if path else ''}{message}"


def _locate(tree: _Node, loc: Loc) -> _Node:
    """The node of the deepest part of `loc` the document has: a mapping entry
    is pointed at by its key, a missing field by the mapping that lacks it."""
    node = where = tree
    for part in loc:
        if isinstance(part, int) and 0 <= part < len(node.items):
            node = where = node.items[part]
        elif str(part) in node.keys:
            where, node = node.keys[str(part)]
        else:
            break
    return where


# What YAML 1.1 makes of an unquoted value that was meant as text: `NO`
# (Norway) is false, `1:2:3:4:5:6:7:8` an integer in base 60.
_YAML_READINGS = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
}


def _pydantic_error(error: Any, tree: _Node, source: str) -> str:
    loc: Loc = tuple(error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if "string" in message:
        value = _value_node(tree, loc)
        if value is not None and value.tag in _YAML_READINGS:
            reading = _YAML_READINGS[value.tag]
            message += f" (YAML reads this unquoted value as {reading}: quote it)"
    return _at(tree, loc, source, message)


def _value_node(tree: _Node, loc: Loc) -> _Node | None:
    node = tree
    for part in loc:
        if isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        elif str(part) in node.keys:
            node = node.keys[str(part)][1]
        else:
            return None
    return node


def _repeated_names(config: Config, tree: _Node, source: str) -> list[str]:
    """Two zones of one name, two profiles of one name in a zone, or a latency
    network listed twice: each is reported at the second, naming the first."""
    errors: list[str] = []

    def check(seen: dict[str, Loc], key: str, loc: Loc, what: str) -> None:
        if key not in seen:
            seen[key] = loc
            return
        first = _locate(tree, seen[key])
        errors.append(
            _at(tree, loc, source, f"{what} is also defined at line {first.line}")
        )

    zones: dict[str, Loc] = {}
    for i, zone in enumerate(config.zones):
        check(zones, zone.name, ("zones", i, "name"), f"zone {zone.name}")
        profiles: dict[str, Loc] = {}
        for j, p in enumerate(zone.profiles):
            where: Loc = ("zones", i, "profiles", j, "name")
            check(profiles, p.name, where, f"profile {names.join(p.name, zone.name)}")
    networks: dict[str, Loc] = {}
    for k, (network, _) in enumerate(config.latency):
        check(networks, network, ("latency", k, "network"), f"network {network}")
    return errors


def _domain_problems(config: Config, tree: _Node, source: str) -> list[str]:
    """The store's cross-object rules (validation.py), at their lines. A nested
    child that is not in the file may exist in the database, so a missing child
    is left for the store (or for config_problems() on the planned result)."""
    errors: list[str] = []
    for i, zone in enumerate(config.zones):
        for j, profile in enumerate(zone.profiles):
            for problem in profile_problems(profile):
                loc = ("zones", i, "profiles", j, *_parts(problem.field))
                errors.append(_at(tree, loc, source, problem.message))
        known = {p.name for p in zone.profiles}
        children = {
            e.child
            for p in zone.profiles
            for e in p.endpoints
            if e.kind is EndpointKind.NESTED and e.child and e.child not in known
        }
        stand_ins = tuple(Profile(name=c, method=Method.PRIORITY) for c in children)
        whole = replace(
            zone,
            profiles=zone.profiles + tuple(sorted(stand_ins, key=lambda p: p.name)),
        )
        for problem in zone_problems(whole):
            errors.append(_at(tree, ("zones", i), source, problem.message))
    return errors


def _parts(dotted: str) -> Loc:
    return tuple(int(p) if p.isdigit() else p for p in dotted.split(".") if p)


# YAML


def _parse_yaml(text: str, source: str) -> tuple[Any, _Node, list[Any]]:
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        raise TransferError(_yaml_syntax(exc, source)) from None
    except yaml.YAMLError as exc:
        raise TransferError(f"{source}: {exc}") from None
    finally:
        loader.dispose()
    if root is None:
        raise TransferError(f"{source}:1:1: the document is empty")
    duplicates: list[Any] = []
    return data, _yaml_tree(root, (), duplicates, {}), duplicates


def _yaml_syntax(exc: yaml.MarkedYAMLError, source: str) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
    message = exc.problem or exc.context or "not YAML"
    if exc.context and exc.problem:
        context_line = (
            f" at line {exc.context_mark.line + 1}" if exc.context_mark else ""
        )
        message = f"{exc.problem} ({exc.context}{context_line})"
    return f"{where}: YAML: {message}"


def _yaml_tree(
    node: yaml.Node, path: Loc, duplicates: list[Any], seen: dict[int, _Node]
) -> _Node:
    if id(node) in seen:  # an alias: the anchored node again
        return seen[id(node)]
    mark = node.start_mark
    out = _Node(mark.line + 1, mark.column + 1, tag=node.tag)
    seen[id(node)] = out
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                continue
            key = str(key_node.value)
            k = _Node(key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            v = _yaml_tree(value_node, (*path, key), duplicates, seen)
            if key in out.keys:
                duplicates.append((".".join(map(str, path)), key, out.keys[key][0], k))
            out.keys[key] = (k, v)
    elif isinstance(node, yaml.SequenceNode):
        out.items = [
            _yaml_tree(item, (*path, i), duplicates, seen)
            for i, item in enumerate(node.value)
        ]
    return out


# JSON

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_CONSTANTS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def _parse_json(text: str, source: str) -> tuple[Any, _Node, list[Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TransferError(
            f"{source}:{exc.lineno}:{exc.colno}: JSON: {exc.msg}"
        ) from None
    except RecursionError:
        raise TransferError(f"{source}: JSON: nested too deeply") from None
    scanner = _JsonPositions(text)
    try:
        tree, _ = scanner.value(0, ())
    except RecursionError:
        raise TransferError(f"{source}: JSON: nested too deeply") from None
    if scanner.constants:
        raise TransferError(
            [
                f"{source}:{n.line}:{n.column}: JSON: {word} is not a JSON value"
                for word, n in scanner.constants
            ]
        )
    return data, tree, scanner.duplicates


class _JsonPositions:
    """Positions of the values of a text json.loads() accepted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.duplicates: list[Any] = []
        self.constants: list[tuple[str, _Node]] = []

    def node(self, index: int) -> _Node:
        line = bisect.bisect_right(self.starts, index)
        return _Node(line, index - self.starts[line - 1] + 1)

    def skip(self, index: int) -> int:
        match = _WHITESPACE.match(self.text, index)
        return match.end() if match else index

    def string(self, index: int) -> tuple[str, int]:
        match = _STRING.match(self.text, index)
        assert match is not None, "json.loads accepted it"
        return str(json.loads(match.group())), match.end()

    def value(self, index: int, path: Loc) -> tuple[_Node, int]:
        text, index = self.text, self.skip(index)
        node, char = self.node(index), text[index]
        if char == "{":
            index = self.skip(index + 1)
            while text[index] != "}":
                key_node = self.node(index)
                key, index = self.string(index)
                index = self.skip(index) + 1  # the colon
                child, index = self.value(index, (*path, key))
                if key in node.keys:
                    self.duplicates.append(
                        (".".join(map(str, path)), key, node.keys[key][0], key_node)
                    )
                node.keys[key] = (key_node, child)
                index = self.skip(index)
                index = self.skip(index + 1) if text[index] == "," else index
            return node, index + 1
        if char == "[":
            index = self.skip(index + 1)
            while text[index] != "]":
                child, index = self.value(index, (*path, len(node.items)))
                node.items.append(child)
                index = self.skip(index)
                index = self.skip(index + 1) if text[index] == "," else index
            return node, index + 1
        if char == '"':
            return node, self.string(index)[1]
        for word in _CONSTANTS:
            if text.startswith(word, index):
                if word not in ("true", "false", "null"):
                    self.constants.append((word, node))
                return node, index + len(word)
        match = _NUMBER.match(text, index)
        assert match is not None, "json.loads accepted it"
        return node, match.end()


# --- plan ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One step of an import, in the order the steps must be applied.

    zone: create carries the zone's own fields (no profiles: each comes as its
    own profile create); update carries the current zone (id, profiles) with
    the file's ns, soa_email, negative_ttl and glue; delete removes the zone
    with its profiles. profile: `after` of an update keeps the current
    profile's id and its endpoints' ids (matched by name), so health and
    history stay with the endpoint. latency: the whole table (`zone` is "").
    """

    action: Action
    kind: Kind
    zone: str
    name: str | None
    before: Zone | Profile | LatencyRows | None
    after: Zone | Profile | LatencyRows | None


def plan(current: Config, desired: Config, prune: bool) -> list[Change]:
    """What turns `current` into `desired`: zones and profiles matched by name,
    updated only when their documents differ. Without `prune` nothing is
    deleted; with it, zones and profiles absent from `desired` are, and an
    empty latency table in `desired` empties the current one.

    Order: zones created and updated; profiles created (nested children before
    their parents) and updated (children first); profiles deleted (parents
    first); zones deleted; the latency table. Raises TransferError for a zone
    entry without `ns` whose zone does not exist.
    """
    have = {z.name: z for z in current.zones}
    want = {z.name: z for z in desired.zones}
    missing = sorted(n for n, z in want.items() if is_reference(z) and n not in have)
    if missing:
        raise TransferError(
            [f"zone {n} does not exist: give its 'ns' to create it" for n in missing]
        )
    zones: list[Change] = []
    creates: list[Change] = []
    updates: list[Change] = []
    deletes: list[Change] = []
    for name in sorted(want):
        target, now = want[name], have.get(name)
        if now is None:
            zones.append(Change("create", "zone", name, None, None, _bare(target)))
        elif not is_reference(target) and _zone_doc(now) != _zone_doc(target):
            after = replace(
                now,
                ns=target.ns,
                soa_email=target.soa_email,
                negative_ttl=target.negative_ttl,
                glue=target.glue,
            )
            zones.append(Change("update", "zone", name, None, now, after))
        existing = {p.name: p for p in now.profiles} if now else {}
        wanted = {p.name: p for p in target.profiles}
        for p in _children_first(target.profiles):
            old = existing.get(p.name)
            if old is None:
                creates.append(Change("create", "profile", name, p.name, None, p))
            elif _profile_doc(old, name) != _profile_doc(p, name):
                updates.append(
                    Change("update", "profile", name, p.name, old, _keep_ids(p, old))
                )
        if prune and now is not None:
            gone = [p for p in now.profiles if p.name not in wanted]
            for p in reversed(_children_first(gone)):
                deletes.append(Change("delete", "profile", name, p.name, p, None))
    dropped = [
        Change("delete", "zone", n, None, have[n], None)
        for n in sorted(have)
        if prune and n not in want
    ]
    return (
        zones
        + creates
        + updates
        + deletes
        + dropped
        + _latency_change(current.latency, desired.latency, prune)
    )


def _bare(zone: Zone) -> Zone:
    return replace(zone, profiles=())


def _keep_ids(profile: Profile, current: Profile) -> Profile:
    ids = {e.name: e.id for e in current.endpoints}
    return replace(
        profile,
        id=current.id,
        endpoints=tuple(replace(e, id=ids.get(e.name, 0)) for e in profile.endpoints),
    )


def _children_first(profiles: Iterable[Profile]) -> list[Profile]:
    """Profiles by name, each after the profiles (of this list) it nests."""
    by_name = {p.name: p for p in sorted(profiles, key=lambda p: p.name)}
    ordered: list[Profile] = []
    state: dict[str, bool] = {}  # False: being visited, True: placed

    def visit(name: str) -> None:
        if name in state:
            return  # placed, or a cycle (the store refuses it)
        state[name] = False
        for e in by_name[name].endpoints:
            if e.kind is EndpointKind.NESTED and e.child in by_name:
                visit(e.child)
        state[name] = True
        ordered.append(by_name[name])

    for name in by_name:
        visit(name)
    return ordered


def _latency_change(
    before: LatencyRows, after: LatencyRows, prune: bool
) -> list[Change]:
    if (not after and not prune) or _latency_doc(before) == _latency_doc(after):
        return []
    action: Action = "create" if not before else "delete" if not after else "update"
    return [Change(action, "latency", "", None, before or None, after or None)]


def _zone_doc(zone: Zone) -> dict[str, Any]:
    """Everything about a zone's own fields, defaults included, canonically."""
    return _zone_in(zone).model_dump(mode="json")


def _profile_doc(profile: Profile, zone: str) -> dict[str, Any]:
    """Everything about a profile, defaults included, without ids or state."""
    return _profile_in(profile, zone).model_dump(mode="json")


def _latency_doc(rows: LatencyRows) -> dict[str, dict[str, float]]:
    return {network: dict(sorted(rtt.items())) for network, rtt in rows}


def describe(changes: Sequence[Change]) -> list[str]:
    """One line per change: `+ profile app.tm.example.`, `~ profile
    web.tm.example. (ttl 60 → 30, endpoints ~b +c)`, `- zone old.example.`."""
    return [_describe(c) for c in changes]


_SIGNS = {"create": "+", "update": "~", "delete": "-"}


def _describe(change: Change) -> str:
    sign = _SIGNS[change.action]
    if change.kind == "latency":
        before, after = change.before, change.after
        counts = [len(rows) for rows in (before, after) if isinstance(rows, tuple)]
        return f"{sign} latency ({' → '.join(map(str, counts))} networks)"
    if change.kind == "zone":
        line = f"{sign} zone {change.zone}"
        if isinstance(change.before, Zone) and isinstance(change.after, Zone):
            details = _differences(_zone_doc(change.before), _zone_doc(change.after))
            return f"{line} ({', '.join(details)})"
        if change.action == "delete" and isinstance(change.before, Zone):
            count = len(change.before.profiles)
            if count:
                return f"{line} (with its {count} profile{'s' if count > 1 else ''})"
        return line
    line = f"{sign} profile {names.join(change.name or names.APEX, change.zone)}"
    if isinstance(change.before, Profile) and isinstance(change.after, Profile):
        details = _differences(
            _profile_doc(change.before, change.zone),
            _profile_doc(change.after, change.zone),
        )
        return f"{line} ({', '.join(details)})"
    return line


def _differences(
    before: dict[str, Any], after: dict[str, Any], prefix: str = ""
) -> list[str]:
    """`ttl 60 → 30` for a scalar, `monitor.interval 30 → 10` inside an object,
    `endpoints +c ~b -a` for endpoints by name, and the field's name otherwise."""
    found: list[str] = []
    for key in dict.fromkeys([*before, *after]):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            found += _differences(old, new, f"{prefix}{key}.")
        elif key == "endpoints" and isinstance(old, list) and isinstance(new, list):
            found.append(f"{prefix}{key}" + _endpoint_changes(old, new))
        elif not isinstance(old, dict | list) and not isinstance(new, dict | list):
            found.append(f"{prefix}{key} {_show(old)} → {_show(new)}")
        else:
            found.append(f"{prefix}{key}")
    return found


def _endpoint_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    old = {e["name"]: e for e in before}
    new = {e["name"]: e for e in after}
    marks = [f"+{n}" for n in new if n not in old]
    marks += [f"~{n}" for n in new if n in old and old[n] != new[n]]
    marks += [f"-{n}" for n in old if n not in new]
    return " " + " ".join(marks) if marks else " reordered"


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- the result of a plan, for --dry-run ----------------------------------------


def apply_plan(current: Config, changes: Sequence[Change]) -> Config:
    """The configuration `changes` lead to, computed without a store: a dry run
    checks it with config_problems() as the store's transaction would."""
    zones = {z.name: z for z in current.zones}
    latency = current.latency
    for c in changes:
        if c.kind == "latency":
            latency = c.after if isinstance(c.after, tuple) else ()
        elif c.kind == "zone":
            if c.action == "delete":
                zones.pop(c.zone, None)
            elif isinstance(c.after, Zone):
                kept = zones[c.zone].profiles if c.zone in zones else ()
                zones[c.zone] = replace(c.after, profiles=kept)
        else:
            zone = zones[c.zone]
            profiles = [p for p in zone.profiles if p.name != c.name]
            if isinstance(c.after, Profile):
                listed = [p.name for p in zone.profiles]
                at = listed.index(c.after.name) if c.after.name in listed else None
                profiles.insert(len(profiles) if at is None else at, c.after)
            zones[c.zone] = replace(zone, profiles=tuple(profiles))
    return Config(zones=tuple(zones.values()), latency=latency, parked=current.parked)


def config_problems(config: Config) -> list[str]:
    """Every cross-object rule the store enforces, as `zone: profile: field:
    message` lines (empty when the configuration is acceptable)."""
    found: list[str] = []
    for zone in config.zones:
        for profile in zone.profiles:
            where = names.join(profile.name, zone.name)
            found += [
                f"{where}: {p.field}: {p.message}" for p in profile_problems(profile)
            ]
        found += [f"{zone.name}: {p.message}" for p in zone_problems(zone)]
    return found


__all__ = [
    "Change",
    "Document",
    "Format",
    "TransferError",
    "ZoneEntry",
    "apply_plan",
    "config_problems",
    "describe",
    "dump",
    "export_document",
    "format_of",
    "is_reference",
    "load",
    "plan",
    "profile_entry",
]
