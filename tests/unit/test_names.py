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


def test_an_absolute_name_outside_the_zone_is_refused_naming_the_zone() -> None:
    """A trailing dot means 'exactly this name': one in another zone cannot
    be a profile of this one, and the message says which zone was meant."""
    with pytest.raises(names.BadName) as refused:
        names.relative("www.other.example.", "tm.example.")
    assert str(refused.value) == (
        "'www.other.example.' is not inside the zone tm.example."
    )


def test_a_relative_name_too_long_once_joined_to_the_zone_is_refused() -> None:
    """Each label fits and the name alone fits, but the profile's full name
    would not: refused when it is entered, not when DNS cannot carry it."""
    zone = ".".join(["z" * 60] * 2) + "."  # 122 octets
    name = ".".join(["a" * 60] * 3)  # 182 octets: 305 joined to the zone
    assert len(names.absolute(name)) + 1 < names.MAX_NAME_OCTETS
    with pytest.raises(names.BadName, match="longer than 255 octets in all"):
        names.relative(name, zone)
    assert names.relative("a" * 60, zone) == "a" * 60  # a shorter one fits
