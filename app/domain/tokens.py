"""API tokens: stored as SHA-256 digests, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class Token:
    name: str
    scope: Scope
    digest: str  # hex SHA-256 of the secret; the secret itself is never kept


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def find_token(tokens: Iterable[Token], presented: str) -> Token | None:
    """The token whose digest matches; every candidate is compared, in constant time,
    so timing tells an attacker nothing about how close a guess was."""
    wanted = digest_of(presented)
    found = None
    for token in tokens:
        if hmac.compare_digest(token.digest, wanted):
            found = token
    return found


def allows(token: Token, write: bool) -> bool:
    return token.scope is Scope.WRITE or not write
