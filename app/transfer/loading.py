"""Document text → validated Config, errors at their line; plans or stores nothing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from app.domain import names
from app.domain.model import Config, EndpointKind, Method, Profile, StaticRRset, Zone
from app.domain.validation import (
    Invalid,
    header_problems,
    profile_problems,
    zone_problems,
)
from app.schemas import LatencyIn, from_json
from app.transfer.errors import TransferError
from app.transfer.model import Document, Format, ZoneEntry
from app.transfer.positions import (
    Loc,
    Node,
    locate,
    parse_json,
    parse_yaml,
    value_node,
)


def load(text: str, fmt: Format, source: str = "<document>") -> Config:
    """Parse and validate a document into a Config (ids 0, nothing parked).

    Raises TransferError naming, for each error, the line and column in the
    text and the field path: `tmdns.yaml:14:9: zones.0.profiles.1.endpoints.0
    .weight: Input should be greater than or equal to 1`.
    """
    data, tree, duplicates = (
        parse_json(text, source) if fmt == "json" else parse_yaml(text, source)
    )
    errors = [
        f"{source}:{again.line}:{again.column}: {path + ': ' if path else ''}"
        f"key {key!r} is repeated (first at line {first.line})"
        for path, key, first, again in duplicates
    ]
    try:
        document = from_json(Document, data)
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
    entry: ZoneEntry, at: Loc, tree: Node, source: str, errors: list[str]
) -> Zone:
    zone = entry.to_domain()
    rrsets: list[StaticRRset] = []
    for j, r in enumerate(entry.rrsets):
        try:
            rrsets.append(r.to_domain_in(zone.name))
        except Invalid as exc:  # bad record data, a type that cannot be static
            errors += [
                _at(tree, (*at, "rrsets", j, *_parts(e.field)), source, e.message)
                for e in exc.problems
            ]
        except names.BadName as exc:
            errors.append(_at(tree, (*at, "rrsets", j, "name"), source, str(exc)))
    profiles: list[Profile] = []
    for j, p in enumerate(entry.profiles):
        try:
            profiles.append(p.to_domain(zone.name))
        except Invalid as exc:  # a name outside the zone, or too long in it
            errors += [
                _at(tree, (*at, "profiles", j, *_parts(e.field)), source, e.message)
                for e in exc.problems
            ]
    rrsets.sort(key=lambda r: (r.name, r.rtype))
    return replace(zone, profiles=tuple(profiles), rrsets=tuple(rrsets))


def _at(tree: Node, loc: Loc, source: str, message: str) -> str:
    node = locate(tree, loc)
    path = ".".join(str(part) for part in loc)
    return f"{source}:{node.line}:{node.column}: {path + ': ' if path else ''}{message}"


# What YAML 1.1 makes of an unquoted value that was meant as text: `NO`
# (Norway) is false, `1:2:3:4:5:6:7:8` an integer in base 60.
_YAML_READINGS = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:int": "a number",
    "tag:yaml.org,2002:float": "a number",
}


def _pydantic_error(error: Any, tree: Node, source: str) -> str:
    loc: Loc = tuple(error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if "string" in message:
        value = value_node(tree, loc)
        if value is not None and value.tag in _YAML_READINGS:
            reading = _YAML_READINGS[value.tag]
            message += f" (YAML reads this unquoted value as {reading}: quote it)"
    return _at(tree, loc, source, message)


def _repeated_names(config: Config, tree: Node, source: str) -> list[str]:
    """Two zones of one name, two profiles of one name in a zone, or a latency
    network listed twice: each is reported at the second, naming the first."""
    errors: list[str] = []

    def check(seen: dict[str, Loc], key: str, loc: Loc, what: str) -> None:
        if key not in seen:
            seen[key] = loc
            return
        first = locate(tree, seen[key])
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


def _domain_problems(config: Config, tree: Node, source: str) -> list[str]:
    """The store's cross-object rules (validation.py), at their lines. A nested
    child that is not in the file may exist in the database, so a missing child
    is left for the store (or for config_problems() on the planned result)."""
    errors: list[str] = []
    for i, zone in enumerate(config.zones):
        for problem in header_problems(zone):
            loc = ("zones", i, *_parts(problem.field))
            errors.append(_at(tree, loc, source, problem.message))
        for j, profile in enumerate(zone.profiles):
            for problem in profile_problems(profile, zone.name):
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
