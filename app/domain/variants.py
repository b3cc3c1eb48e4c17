"""Every answer a name can get, enumerated ahead of time, where the answer does
not depend on the client: what the DNS layer pre-encodes.

The answers come from the one resolution path, answer(), run with a random
source that picks a given choice; so a pre-encoded answer is always one the
full path could have given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

from app.domain.answer import Answer, answer
from app.domain.model import Method
from app.domain.query import QueryContext
from app.domain.snapshot import Snapshot

CLIENT_DEPENDENT = frozenset({Method.PERFORMANCE, Method.GEOGRAPHIC, Method.SUBNET})
MAX_VARIANTS = 64


@dataclass(frozen=True, slots=True)
class Variants:
    answers: tuple[Answer, ...]
    weights: tuple[float, ...] | None  # None: all equally likely


class _Pick(Random):
    """A random source that makes the routing method take choice `index`, and
    remembers what it was offered; any other use of randomness is refused."""

    def __init__(self, index: int) -> None:
        super().__init__(0)
        self.index, self.calls = index, 0
        self.size = 0
        self.weights: tuple[float, ...] | None = None

    def choices(  # type: ignore[override]
        self,
        population: Sequence[Any],
        weights: Sequence[float] | None = None,
        **_: Any,
    ) -> list[Any]:
        self.calls += 1
        self.size = len(population)
        self.weights = tuple(weights) if weights is not None else None
        return [population[self.index % len(population)]]

    def randrange(self, stop: int, *_: Any, **__: Any) -> int:  # type: ignore[override]
        self.calls += 1
        self.size = stop
        return self.index % stop

    def random(self) -> float:
        raise _Unforeseen


class _Unforeseen(Exception):
    """The answer used randomness in a way that cannot be enumerated."""


def variants(snapshot: Snapshot, qname: str, qtype: int) -> Variants | None:
    """The possible answers to (qname, qtype) for any client, or None when the
    answer depends on the client or the name does not exist (an unbounded set
    of names must not fill memory)."""
    node = snapshot.nodes.get(qname)
    if node is None and qname not in snapshot.empty_non_terminals:
        return None
    plan = None
    if node is not None:
        plan = node.profile or (node.srv[0] if node.srv else None)
    if plan is not None and (plan.profile.method in CLIENT_DEPENDENT or plan.children):
        return None
    ctx = QueryContext(now=snapshot.compiled_at)
    try:
        first = _Pick(0)
        base = answer(snapshot, qname, qtype, ctx, first)
        if first.calls == 0:
            return Variants((base,), None)
        if first.calls > 1 or first.size > MAX_VARIANTS:
            return None
        rest = [
            answer(snapshot, qname, qtype, ctx, _Pick(i)) for i in range(1, first.size)
        ]
    except _Unforeseen:
        return None
    return Variants((base, *rest), first.weights)
