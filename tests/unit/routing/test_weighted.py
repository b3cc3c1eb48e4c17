from collections import Counter
from random import Random

import pytest

from app.domain.model import Method
from app.domain.query import QueryContext
from app.domain.routing import weighted
from tests.builders import make_endpoint, make_profile

CTX = QueryContext()
PROFILE = make_profile(method=Method.WEIGHTED)


@pytest.mark.parametrize("weights", [(1, 1), (3, 1), (50, 30, 20), (1000, 1)])
def test_share_of_answers_tracks_weight(weights: tuple[int, ...]) -> None:
    endpoints = [
        make_endpoint(f"e{i}", f"127.0.0.{i + 1}", weight=w, priority=i + 1)
        for i, w in enumerate(weights)
    ]
    rng, n = Random(1234), 20_000
    picks = Counter(
        weighted.select(PROFILE, endpoints, CTX, rng).endpoints[0].name
        for _ in range(n)
    )
    for i, w in enumerate(weights):
        # abs 0.015 is about 5 standard deviations at n = 20,000
        assert picks[f"e{i}"] / n == pytest.approx(w / sum(weights), abs=0.015)


def test_one_endpoint_is_always_chosen() -> None:
    only = make_endpoint("only", weight=7)
    assert weighted.select(PROFILE, [only], CTX, Random(5)).endpoints == (only,)


def test_nothing_available_is_nodata() -> None:
    assert weighted.select(PROFILE, [], CTX, Random(5)).endpoints == ()
