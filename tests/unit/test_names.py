import pytest

from app.domain import names


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("TM.Example", "tm.example."), ("tm.example.", "tm.example."), (".", ".")],
)
def test_absolute_names_are_lowercase_with_a_trailing_dot(
    given: str, canonical: str
) -> None:
    assert names.absolute(given) == canonical


@pytest.mark.parametrize(
    "bad", ["a..b", "-x.example", "x" * 64 + ".example", "a b.example"]
)
def test_names_dns_cannot_carry_are_rejected(bad: str) -> None:
    with pytest.raises(names.BadName):
        names.absolute(bad)


def test_a_name_over_255_octets_is_rejected() -> None:
    with pytest.raises(names.BadName):
        names.absolute(".".join(["a" * 60] * 5))


@pytest.mark.parametrize(
    ("given", "relative"),
    [
        ("www", "www"),
        ("WWW.tm.example.", "www"),
        ("www.tm.example", "www"),
        ("tm.example", "@"),
        ("@", "@"),
        ("a.b", "a.b"),
    ],
)
def test_profile_names_are_relative_to_their_zone(given: str, relative: str) -> None:
    assert names.relative(given, "tm.example.") == relative
