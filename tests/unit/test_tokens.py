"""API tokens (app/domain/tokens.py): a presented secret finds its token by
digest, and a token's scope decides whether it may write."""

from __future__ import annotations

from app.domain.tokens import Scope, Token, allows, digest_of, find_token

READER = Token("dashboard", Scope.READ, digest_of("read-secret"))
WRITER = Token("ci", Scope.WRITE, digest_of("write-secret"))


def test_only_the_digest_of_a_secret_is_kept() -> None:
    """The stored value is the hex SHA-256 of the secret, never the secret."""
    assert digest_of("read-secret") == digest_of("read-secret")
    assert len(READER.digest) == 64 and "read-secret" not in READER.digest
    assert digest_of("read-secret") != digest_of("write-secret")


def test_a_presented_secret_finds_its_own_token_among_others() -> None:
    """Whichever place the token has in the list, its secret finds it, and
    the others' secrets find theirs."""
    assert find_token([READER, WRITER], "write-secret") is WRITER
    assert find_token([WRITER, READER], "write-secret") is WRITER
    assert find_token([READER, WRITER], "read-secret") is READER


def test_an_unknown_or_empty_secret_finds_no_token() -> None:
    """A wrong secret, an empty one or a digest itself gets nobody in."""
    tokens = [READER, WRITER]
    assert find_token(tokens, "guess") is None
    assert find_token(tokens, "") is None
    assert find_token(tokens, READER.digest) is None
    assert find_token([], "read-secret") is None


def test_a_read_token_may_only_read_and_a_write_token_may_do_both() -> None:
    """Read scope is refused every change; write scope is allowed both."""
    assert allows(READER, write=False) and not allows(READER, write=True)
    assert allows(WRITER, write=False) and allows(WRITER, write=True)
