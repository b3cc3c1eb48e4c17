"""The one random choice a routing method may make, asked for explicitly.

A method that chooses at random (weighted, multivalue) names its options and
their weights to a Draw and gets back the index of one; nothing else in a
decision is random. DNS decides with RandomDraw over the process's Random (so
tests seed it); the fast path enumerates every answer a question can get by
deciding once per option with a draw that takes a given index and records what
it was offered (app.domain.variants). Either way the method's choice set is
the one it states, whatever it does with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Protocol


class Draw(Protocol):
    def index(self, count: int, weights: Sequence[float] | None = None) -> int:
        """One of range(count): uniformly, or in proportion to `weights`."""
        ...


class RandomDraw:
    """Draws from a Random exactly as Random.randrange and Random.choices do,
    so a seeded Random gives the same sequence of answers as before."""

    __slots__ = ("_rng",)

    def __init__(self, rng: Random) -> None:
        self._rng = rng

    def index(self, count: int, weights: Sequence[float] | None = None) -> int:
        if weights is None:
            return self._rng.randrange(count)
        return self._rng.choices(range(count), weights=weights)[0]
