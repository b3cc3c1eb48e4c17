"""A small snapshot shared by the reply-cache tests: three priority profiles,
one address each, nothing client-dependent."""

from __future__ import annotations

from app.domain.model import Config, Method
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

ADDRESSES = {"a": "192.0.2.1", "b": "192.0.2.2", "c": "192.0.2.3"}
SNAPSHOT = compile_snapshot(
    Config(
        (
            make_zone(
                *(
                    make_profile(name, Method.PRIORITY, make_endpoint(name, address))
                    for name, address in ADDRESSES.items()
                )
            ),
        )
    ),
    {},
    1,
    0.0,
)
