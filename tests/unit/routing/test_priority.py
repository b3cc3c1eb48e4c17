from random import Random

from app.domain.model import Method
from app.domain.query import QueryContext
from app.domain.routing import ROUTERS, priority
from tests.builders import make_endpoint, make_profile

CTX = QueryContext()


def test_lowest_priority_value_wins_whatever_the_list_order() -> None:
    endpoints = [
        make_endpoint("c", "127.0.0.3", priority=30),
        make_endpoint("a", "127.0.0.1", priority=10),
        make_endpoint("b", "127.0.0.2", priority=20),
    ]
    decision = priority.select(make_profile(), endpoints, CTX, Random(1))
    assert [e.name for e in decision.endpoints] == ["a"]
    assert "10" in decision.why


def test_nothing_available_is_nodata() -> None:
    decision = priority.select(make_profile(), [], CTX, Random(1))
    assert decision.endpoints == ()


def test_priority_and_weighted_have_routers() -> None:
    assert {Method.PRIORITY, Method.WEIGHTED} <= set(ROUTERS)
