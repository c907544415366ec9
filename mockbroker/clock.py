"""Time: the Clock protocol, LoopClock (real time) and ManualClock (advanced by hand in tests).

Only this module reads time. Everything that cares about time takes ``now_ms`` (epoch
milliseconds, as Kafka's timestamps are) from the clock the cluster was built with, so a test
can expire a session by advancing a ManualClock instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the epoch."""
        ...

    @property
    def manual(self) -> bool:
        """True when time moves only by ``advance`` (timers fire there, not on the event loop)."""
        ...


class LoopClock:
    """Wall-clock time, for brokers that real clients talk to in real time."""

    manual = False

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """Time that moves only when a test says so.

    ``advance(ms)`` moves time forward and then runs whatever the timers registered as
    listeners have become due, in deadline order, before returning.
    """

    manual = True

    # A fixed, readable epoch: 2026-01-01T00:00:00Z.
    DEFAULT_START_MS = 1_767_225_600_000

    def __init__(self, start_ms: int = DEFAULT_START_MS) -> None:
        self._now_ms = start_ms
        self._listeners: list[Callable[[int], None]] = []

    def now_ms(self) -> int:
        return self._now_ms

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError(f"time only moves forward; cannot advance by {ms} ms")
        self._now_ms += ms
        for listener in list(self._listeners):
            listener(self._now_ms)
        return self._now_ms

    def on_advance(self, listener: Callable[[int], None]) -> None:
        self._listeners.append(listener)
