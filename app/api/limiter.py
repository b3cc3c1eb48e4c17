"""Slowing down repeated failed authentication from one address."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class FailureLimiter:
    """Failed authentications per client address in a sliding window; past
    `free` failures each further attempt waits longer (up to `max_delay`)."""

    window: float = 60.0
    free: int = 5
    max_delay: float = 5.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def delay(self, address: str, now: float) -> float:
        recent = self._failures.get(address)
        if not recent:
            return 0.0
        while recent and now - recent[0] > self.window:
            recent.popleft()
        excess = len(recent) - self.free
        return 0.0 if excess < 0 else min(self.max_delay, 0.1 * 2**excess)

    def failed(self, address: str, now: float) -> None:
        self._failures.setdefault(address, deque(maxlen=1000)).append(now)
        if len(self._failures) > 10_000:  # bounded memory under a spray of addresses
            self._failures.pop(next(iter(self._failures)))
