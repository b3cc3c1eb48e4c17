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


def test_targets_follow_a_changed_profile_and_keep_the_others() -> None:
    from dataclasses import replace

    from app.domain.model import Config, Method, Monitor, MonitorProtocol
    from app.domain.snapshot import compile_snapshot
    from app.prober.worker import Known, targets_of
    from tests.builders import make_endpoint, make_profile, make_zone

    tcp = Monitor(protocol=MonitorProtocol.TCP, port=5060)
    kept = make_profile("kept", Method.PRIORITY, make_endpoint(id=1), monitor=tcp, id=1)
    moved = make_profile(
        "moved", Method.PRIORITY, make_endpoint(id=2), monitor=tcp, id=2
    )
    known: Known = {}
    zone = make_zone(kept, moved)
    before = targets_of(compile_snapshot(Config((zone,)), {}, 1, 0.0), known)
    fixed = replace(moved, monitor=replace(tcp, port=5070))
    after = targets_of(
        compile_snapshot(Config((make_zone(kept, fixed),)), {}, 2, 0.0), known
    )
    assert after[2].probe.port == 5070
    assert after[1] is before[1]  # the untouched profile was not looked at again
    gone = targets_of(compile_snapshot(Config((make_zone(kept),)), {}, 3, 0.0), known)
    assert set(gone) == {1}
