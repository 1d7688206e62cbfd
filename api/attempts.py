"""A few tries a minute per address: what keeps a 6-digit PIN from being guessed.

`Attempts(limit, window)` remembers, per client address, the times of its recent tries in
this process (each API process counts its own: behind N replicas an address has N times the
limit, still far too few to guess a PIN that is single-use and expires).
"""

from __future__ import annotations

import threading
import time
from collections import deque

from api.problems import ApiProblem


class Attempts:
    def __init__(self, limit: int = 5, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def count(self, address: str) -> None:
        """Count one try from `address`, or refuse it (429) when it made `limit` this window."""
        now = time.monotonic()
        with self._lock:
            for known in [a for a, times in self._seen.items() if times[-1] <= now - self.window]:
                del self._seen[known]  # forget quiet addresses
            times = self._seen.setdefault(address, deque())
            while times and times[0] <= now - self.window:
                times.popleft()
            if len(times) >= self.limit:
                wait = int(times[0] + self.window - now) + 1
                raise ApiProblem(429, f"too many sign-in tries from this address: wait {wait} s",
                                 rule="too-many-attempts", headers={"Retry-After": str(wait)})
            times.append(now)
