"""A real store that fails on demand: the fault tests inject an exception into
one call of one method and watch the loop that made it recover."""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.store.sql import SqlStore


class InjectedFault(RuntimeError):
    """What the fault tests inject: nothing in tmdns raises or expects it."""


class FaultyStore(SqlStore):
    """SqlStore with `arm(method, after)`: the call of `method` that comes
    after `after` more calls raises InjectedFault instead of touching the
    database."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.calls: Counter[str] = Counter()
        self._fail_at: dict[str, int] = {}

    def arm(self, method: str, after: int = 0) -> None:
        self._fail_at[method] = self.calls[method] + after + 1

    def _trip(self, method: str) -> None:
        self.calls[method] += 1
        if self._fail_at.get(method) == self.calls[method]:
            raise InjectedFault(f"injected into {method}")

    async def pulse(self) -> tuple[int, float | None]:
        self._trip("pulse")
        return await super().pulse()

    async def load_all(self) -> Any:
        self._trip("load_all")
        return await super().load_all()

    async def views_of(self, vantage: str) -> Any:
        self._trip("views_of")
        return await super().views_of(vantage)

    async def record_health_batch(self, updates: Any, *args: Any) -> None:
        self._trip("record_health_batch")
        await super().record_health_batch(updates, *args)

    async def heartbeat(self, now: float, *args: Any) -> Any:
        self._trip("heartbeat")
        return await super().heartbeat(now, *args)

    async def prune_transitions(self, before: float) -> int:
        self._trip("prune_transitions")
        return await super().prune_transitions(before)

    async def list_webhooks(self) -> Any:
        self._trip("list_webhooks")
        return await super().list_webhooks()

    async def add_traffic(self, counts: Any) -> None:
        self._trip("add_traffic")
        await super().add_traffic(counts)
