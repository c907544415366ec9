"""Time: the Clock protocol, LoopClock (real time) and ManualClock (advanced by hand in tests).

Only this module reads time. Everything that cares about time takes ``now_ms`` (epoch
milliseconds, as Kafka's timestamps are) from the clock the cluster was built with, so a test
can expire a session by advancing a ManualClock instead of sleeping.
"""

from __future__ import annotations

import time
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


def client_clock_ms(clock: Clock, now_ms: int) -> int:
    """The time clients stamp their records with, for the checks that compare a record's CreateTime
    with the broker's time (KIP-937's bounds): the broker's own ``now_ms``, except under a manual
    clock, whose time is a test's fiction (2026-01-01 until advanced) while real clients stamp
    records with real time: then the wall clock too (a record in bounds of either is accepted), or
    a real client's every record would be refused as from the future."""
    return time.time_ns() // 1_000_000 if clock.manual else now_ms


class TimerSource(Protocol):
    """What ManualClock needs from the timers it drives (mockbroker.timers.Timers)."""

    def next_deadline(self) -> int | None: ...

    def fire_due(self, now_ms: int | None = None) -> None: ...


class ManualClock:
    """Time that moves only when a test says so.

    ``advance(ms)`` walks time forward deadline by deadline: at each due timer's deadline the
    clock reads exactly that deadline while the timer runs, so a timer re-armed from its own
    callback (a session timer re-armed by a heartbeat, a periodic check) keeps its cadence, as
    it would in real time. Then time stops at the target.
    """

    manual = True

    # A fixed, readable epoch: 2026-01-01T00:00:00Z.
    DEFAULT_START_MS = 1_767_225_600_000

    def __init__(self, start_ms: int = DEFAULT_START_MS) -> None:
        self._now_ms = start_ms
        self._sources: list[TimerSource] = []

    def now_ms(self) -> int:
        return self._now_ms

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError(f"time only moves forward; cannot advance by {ms} ms")
        target = self._now_ms + ms
        while True:
            due = [d for s in self._sources if (d := s.next_deadline()) is not None and d <= target]
            if not due:
                break
            self._now_ms = max(self._now_ms, min(due))
            for source in list(self._sources):
                source.fire_due(self._now_ms)
        self._now_ms = target
        return self._now_ms

    def drive(self, source: TimerSource) -> None:
        """Fire ``source``'s timers as time advances."""
        self._sources.append(source)
