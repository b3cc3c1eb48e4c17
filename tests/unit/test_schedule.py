from random import Random

import pytest

from app.prober.schedule import first_due, next_due


@pytest.mark.parametrize("interval", [1.0, 10.0, 30.0, 3600.0])
def test_a_new_endpoint_is_probed_within_one_second(interval: float) -> None:
    rng = Random(3)
    dues = [first_due(100.0, interval, rng) for _ in range(2000)]
    assert all(100.0 <= d <= 100.0 + min(interval, 1.0) for d in dues)


def test_jitter_spreads_probes_and_never_delays_them() -> None:
    rng = Random(4)
    dues = [next_due(0.0, 30.0, rng) for _ in range(5000)]
    assert all(27.0 <= d <= 30.0 for d in dues)  # up to 10 % early, never late
    assert max(dues) - min(dues) > 2.5  # endpoints sharing an interval spread out


def test_a_monitor_address_is_probed_instead_of_the_served_one() -> None:
    from app.domain.model import Config, Method, Monitor, MonitorProtocol
    from app.domain.snapshot import compile_snapshot
    from app.prober.worker import targets_of
    from tests.builders import make_endpoint, make_profile, make_zone

    health_port = Monitor(
        protocol=MonitorProtocol.HTTP,
        port=8081,
        address="127.0.0.9",
        host="mcp.example.net",
    )
    zone = make_zone(
        make_profile(
            "media",
            Method.PRIORITY,
            make_endpoint("mcp", "127.0.0.1", id=1, monitor=health_port),
            make_endpoint("plain", "127.0.0.2", priority=2, id=2),
            monitor=Monitor(protocol=MonitorProtocol.TCP, port=5060),
        )
    )
    targets = targets_of(compile_snapshot(Config((zone,)), {}, 1, 0.0))
    assert (targets[1].probe.address, targets[1].probe.port) == ("127.0.0.9", 8081)
    assert targets[1].probe.host == "mcp.example.net"
    assert (targets[2].probe.address, targets[2].probe.port) == ("127.0.0.2", 5060)
