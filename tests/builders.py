"""Minimal, typed builders for domain values used across the tests."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address
from typing import Any

from app.domain.model import Endpoint, Method, Monitor, MonitorProtocol, Profile, Zone

UNMONITORED = Monitor(protocol=MonitorProtocol.NONE)


def make_endpoint(
    name: str = "e1", address: str | None = "127.0.0.1", **over: Any
) -> Endpoint:
    parsed = ip_address(address) if address is not None else None
    return replace(Endpoint(name=name, address=parsed), **over)


def make_profile(
    name: str = "app",
    method: Method = Method.PRIORITY,
    *endpoints: Endpoint,
    **over: Any,
) -> Profile:
    return replace(
        Profile(name=name, method=method, monitor=UNMONITORED, endpoints=endpoints),
        **over,
    )


def make_zone(*profiles: Profile, name: str = "tm.example.", **over: Any) -> Zone:
    zone = Zone(name=name, ns=("ns1.tm.example.",), soa_email="hostmaster@tm.example")
    return replace(zone, profiles=profiles, **over)
