"""Every answer a question can get, enumerated ahead of time: what the DNS layer
pre-encodes.

For a client-independent name the set holds for every client; for a
client-dependent one (geographic, subnet, performance, nested profiles) it is
the set for one client context, and each answer's `holds_for` says how wide a
block of clients shares it. The answers come from the one resolution path,
answer(), run once per option of the one random choice a method states
(app.domain.draw); so a pre-encoded answer is always one the full path could
have given.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from app.domain import routing
from app.domain.answer import Answer, answer
from app.domain.query import QueryContext
from app.domain.routing import ClientUse
from app.domain.snapshot import ProfilePlan, Snapshot

MAX_VARIANTS = 64


@dataclass(frozen=True, slots=True)
class Variants:
    answers: tuple[Answer, ...]
    weights: tuple[float, ...] | None  # None: all equally likely

    @property
    def holds_for(self) -> int:
        """The client bits any of the answers depends on: the block of clients
        (of one client prefix) that gets this same set."""
        return max(a.holds_for for a in self.answers)


class _Taking:
    """A Draw that takes option `chosen` and remembers what the method offered
    (how many options, their weights) and how often it asked."""

    def __init__(self, chosen: int) -> None:
        self.chosen, self.calls = chosen, 0
        self.size = 0
        self.weights: tuple[float, ...] | None = None

    def index(self, count: int, weights: Sequence[float] | None = None) -> int:
        self.calls += 1
        self.size = count
        self.weights = tuple(weights) if weights is not None else None
        return self.chosen % count


class _Unforeseen(Exception):
    """A choice led to another random choice: the set cannot be enumerated
    this way."""


def _routed_plan(snapshot: Snapshot, qname: str) -> ProfilePlan | None:
    node = snapshot.nodes.get(qname)
    if node is None:
        return None
    return node.profile or (node.srv[0] if node.srv else None)


def depends_on_client(snapshot: Snapshot, qname: str) -> bool:
    """Whether answers at qname may differ between clients: its profile routes
    by the client, or nests child profiles (whatever their methods)."""
    plan = _routed_plan(snapshot, qname)
    return plan is not None and (
        routing.depends_on_client(plan.profile.method) or bool(plan.children)
    )


def decided_by_place(snapshot: Snapshot, qname: str) -> bool:
    """Whether answers at qname depend on the client only through its GeoIP
    place: its profile and every profile it nests route by place or not by
    the client at all, and one of them by place. Every answer then holds for
    the client's whole GeoIP network (its `holds_for` is that network's
    length, or 0 where no place was looked at)."""
    plan = _routed_plan(snapshot, qname)
    if plan is None:
        return False
    uses = set(_client_uses(plan))
    return ClientUse.PLACE in uses and ClientUse.ADDRESS not in uses


def _client_uses(plan: ProfilePlan) -> Iterator[ClientUse]:
    yield routing.METHODS[plan.profile.method].client_use
    for child in plan.children.values():
        yield from _client_uses(child)


def variants(
    snapshot: Snapshot, qname: str, qtype: int, ctx: QueryContext | None = None
) -> Variants | None:
    """The possible answers to (qname, qtype), or None when the name does not
    exist (an unbounded set of names must not fill memory) or the choices
    cannot be enumerated (more than one random draw, too many choices).

    Without `ctx`, client-dependent names are None as well; with it, the
    answers are those for that client context.
    """
    node = snapshot.nodes.get(qname)
    if node is None and qname not in snapshot.empty_non_terminals:
        return None
    if ctx is None:
        if depends_on_client(snapshot, qname):
            return None
        ctx = QueryContext(now=snapshot.compiled_at)
    try:
        first = _Taking(0)
        base = answer(snapshot, qname, qtype, ctx, first)
        if first.calls == 0:
            return Variants((base,), None)
        if first.calls > 1 or first.size > MAX_VARIANTS:
            return None
        rest = [_nth(snapshot, qname, qtype, ctx, i) for i in range(1, first.size)]
    except _Unforeseen:
        return None
    return Variants((base, *rest), first.weights)


def _nth(
    snapshot: Snapshot, qname: str, qtype: int, ctx: QueryContext, i: int
) -> Answer:
    """The answer when the one random draw takes choice i. A choice leading to
    another draw (a weighted parent nesting a weighted child) cannot be
    enumerated this way."""
    pick = _Taking(i)
    found = answer(snapshot, qname, qtype, ctx, pick)
    if pick.calls != 1:
        raise _Unforeseen
    return found
