"""When each endpoint is probed next: pure arithmetic with injected randomness.

Jitter spreads endpoints that share an interval, so thousands of them do not
fire in the same instant; it only ever shortens the wait, so failover is never
slower than interval × (tolerated failures + 1).
"""

from __future__ import annotations

from random import Random

FIRST_PROBE_WITHIN = 1.0  # DESIGN §5: a new endpoint is probed within 1 s
JITTER = 0.1


def first_due(now: float, interval: float, rng: Random) -> float:
    return now + rng.uniform(0.0, min(interval, FIRST_PROBE_WITHIN))


def next_due(now: float, interval: float, rng: Random, first: bool = False) -> float:
    """After an endpoint's first probe, its next one lands at a random phase of
    the interval: endpoints created together (an import, a restart) are spread
    over the whole interval from then on instead of firing together forever."""
    if first:
        return now + interval * rng.uniform(0.0, 1.0)
    return now + interval * rng.uniform(1.0 - JITTER, 1.0)
