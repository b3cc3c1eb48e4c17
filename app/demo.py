"""The demo zone `tm.example.` that `tmdns serve --demo` creates when it is missing.

Every probed endpoint is a loopback address: the demo never sends a packet
off this machine.
"""

from __future__ import annotations

import logging
from ipaddress import ip_address

from app.domain.model import Endpoint, Method, Monitor, MonitorProtocol, Profile, Zone
from app.store.base import AdminStore, NotFound

log = logging.getLogger(__name__)
DEMO_ZONE = "tm.example."


def demo_zone() -> Zone:
    return Zone(
        name=DEMO_ZONE,
        ns=("ns1.tm.example.",),
        soa_email="hostmaster@tm.example",
        glue=(("ns1.tm.example.", ip_address("127.0.0.1")),),
    )


def demo_profiles(api_port: int) -> list[Profile]:
    """A priority profile whose primary is probed on the API's own port (so it is
    online) and whose secondary is probed where nothing listens (so it fails over
    visibly), and an unmonitored weighted profile split 3:1."""
    probe_api = Monitor(
        protocol=MonitorProtocol.TCP,
        port=api_port,
        interval=5,
        timeout=2,
        tolerated_failures=1,
    )
    return [
        Profile(
            name="app",
            method=Method.PRIORITY,
            monitor=probe_api,
            endpoints=(
                Endpoint(name="primary", address=ip_address("127.0.0.1"), priority=1),
                Endpoint(name="secondary", address=ip_address("127.0.0.2"), priority=2),
            ),
        ),
        Profile(
            name="web",
            method=Method.WEIGHTED,
            monitor=Monitor(protocol=MonitorProtocol.NONE),
            endpoints=(
                Endpoint(
                    name="blue", address=ip_address("127.0.0.11"), priority=1, weight=3
                ),
                Endpoint(
                    name="green", address=ip_address("127.0.0.12"), priority=2, weight=1
                ),
            ),
        ),
    ]


async def ensure_demo(store: AdminStore, api_port: int) -> None:
    try:
        await store.get_zone(DEMO_ZONE)
        return
    except NotFound:
        pass
    await store.create_zone(demo_zone(), actor="demo")
    for profile in demo_profiles(api_port):
        await store.create_profile(DEMO_ZONE, profile, actor="demo")
    log.info("demo zone %s created", DEMO_ZONE)
