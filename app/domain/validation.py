"""Cross-object rules that a single field cannot express; each yields a Problem.

The store runs these inside the write transaction, so a rejected change leaves
the database as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain import names
from app.domain.model import (
    Endpoint,
    EndpointKind,
    Failback,
    Monitor,
    MonitorProtocol,
    Profile,
    Zone,
)
from app.domain.routing import ROUTERS

# The probes the prober runs today; the others are refused rather than stored
# unprobed, which would serve their endpoints as `checking` forever.
PROBED_PROTOCOLS = frozenset({MonitorProtocol.TCP, MonitorProtocol.NONE})


@dataclass(frozen=True, slots=True)
class Problem:
    field: str  # dotted path as in the API body, e.g. "endpoints.1.priority"
    message: str


def profile_problems(profile: Profile) -> list[Problem]:
    """What is wrong with one profile and its endpoints, field by field."""
    problems: list[Problem] = []
    if profile.method not in ROUTERS:
        problems.append(
            Problem("method", f"method {profile.method!r} is not supported yet")
        )
    if profile.failback is Failback.PARKING:
        problems.append(Problem("failback", "failback 'parking' is not supported yet"))
    problems += _monitor_problems("monitor", profile.monitor)
    first_named: dict[str, Endpoint] = {}
    first_ranked: dict[int, Endpoint] = {}
    for i, e in enumerate(profile.endpoints):
        if (twin := first_named.setdefault(e.name, e)) is not e:
            problems.append(
                Problem(
                    f"endpoints.{i}.name", f"endpoint name {e.name!r} is used twice"
                )
            )
        if (twin := first_ranked.setdefault(e.priority, e)) is not e:
            problems.append(
                Problem(
                    f"endpoints.{i}.priority",
                    f"priority {e.priority} is already used by endpoint {twin.name!r}",
                )
            )
        if e.kind is EndpointKind.ADDRESS and e.address is None:
            problems.append(
                Problem(
                    f"endpoints.{i}.address", "an address endpoint needs an address"
                )
            )
        if e.kind is EndpointKind.HOST and profile.name == names.APEX:
            problems.append(
                Problem(
                    f"endpoints.{i}.kind",
                    "a profile at the zone apex cannot answer with a CNAME "
                    "(the apex holds SOA and NS): use address endpoints",
                )
            )
        if e.kind is EndpointKind.HOST and e.target is None:
            problems.append(
                Problem(f"endpoints.{i}.target", "a host endpoint needs a target")
            )
        if e.monitor is not None:
            problems += _monitor_problems(f"endpoints.{i}.monitor", e.monitor)
        if e.kind is EndpointKind.NESTED:
            problems.append(
                Problem(f"endpoints.{i}.kind", "nested endpoints are not supported yet")
            )
    return problems


def _monitor_problems(field: str, monitor: Monitor) -> list[Problem]:
    if monitor.protocol in PROBED_PROTOCOLS:
        return []
    message = f"monitor protocol {monitor.protocol.value!r} is not supported yet"
    return [Problem(f"{field}.protocol", message)]


def zone_problems(zone: Zone) -> list[Problem]:
    """Owner-name collisions: every name in the zone has one owner (DESIGN §3)."""
    problems: list[Problem] = []
    owners: dict[str, str] = {host: f"name server {host}" for host, _ in zone.glue}
    for profile in zone.profiles:
        fqdn = names.join(profile.name, zone.name)
        owned = [(fqdn, f"profile {profile.name!r}")]
        owned += [
            (f"{s.service}.{fqdn}", f"service {s.service} of profile {profile.name!r}")
            for s in profile.srv
        ]
        owned += [
            (f"{e.name}.{fqdn}", f"endpoint {e.name!r} of profile {profile.name!r}")
            for e in profile.endpoints
            if e.kind is EndpointKind.ADDRESS
        ]
        for name, owner in owned:
            if name in owners and owners[name] != owner:
                problems.append(
                    Problem(
                        "name",
                        f"{name} is already owned by {owners[name]} ({owner} collides)",
                    )
                )
            owners.setdefault(name, owner)
    return problems
