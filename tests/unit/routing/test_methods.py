"""The method table: every routing method has one spec, under its own name,
and what the table says is what the rest of tmdns does."""

from random import Random

from app.azure.profile import METHOD_BY_AZURE_NAME
from app.domain.draw import RandomDraw
from app.domain.model import Config, Method
from app.domain.query import QueryContext
from app.domain.routing import METHODS, Candidates, depends_on_client
from app.domain.snapshot import compile_snapshot
from app.domain.variants import depends_on_client as name_depends_on_client
from tests.builders import make_endpoint, make_profile, make_zone


def test_every_method_has_exactly_one_spec_filed_under_it() -> None:
    assert set(METHODS) == set(Method)
    for method, spec in METHODS.items():
        assert spec.method is method
        assert callable(spec.select) and callable(spec.srv)


def test_the_methods_that_route_by_the_client_are_the_ones_the_fast_path_splits() -> (
    None
):
    """A method that answers by the client but claimed not to would have one
    reply cached for every client: a silent misroute."""
    split = {m for m in Method if depends_on_client(m)}
    assert split == {Method.PERFORMANCE, Method.GEOGRAPHIC, Method.SUBNET}
    for method in Method:
        profile = make_profile("p", method, make_endpoint("a", "127.0.0.1", id=1))
        snapshot = compile_snapshot(Config((make_zone(profile),)), {}, 1, 0.0)
        assert name_depends_on_client(snapshot, "p.tm.example.") == (method in split)


def test_azure_names_come_from_the_table() -> None:
    assert METHOD_BY_AZURE_NAME == {
        "priority": "priority",
        "weighted": "weighted",
        "performance": "performance",
        "geographic": "geographic",
        "multivalue": "multivalue",
        "subnet": "subnet",
    }


def test_every_method_answers_srv_through_its_spec() -> None:
    """Forgetting a method's SRV rule was a KeyError answered as SERVFAIL."""
    for method, spec in METHODS.items():
        endpoint = make_endpoint("a", "127.0.0.1", id=1, geo=("WORLD",))
        profile = make_profile("p", method, endpoint)
        candidates = Candidates(profile, profile.endpoints, profile.endpoints)
        choices, _ = spec.srv(candidates, QueryContext(), RandomDraw(Random(1)))
        assert [c.endpoint.name for c in choices] == ["a"], method
