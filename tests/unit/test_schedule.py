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
