"""Timers: the only place that waits. Deadlines in clock milliseconds, keyed so they can be
re-armed or cancelled (a member's session timer is re-armed by every heartbeat).

With a LoopClock one asyncio TimerHandle is kept for the earliest deadline. With a ManualClock
nothing waits at all: due timers fire inside ``ManualClock.advance``; one armed for a deadline
that is already due (group.initial.rebalance.delay.ms = 0, say) fires at the next turn of the
running event loop, as it would in real time, so real clients do not wait for an advance().
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Hashable

from mockbroker.clock import Clock, ManualClock

# Stale heap entries tolerated (beyond twice the live ones) before the heap is rebuilt.
_COMPACT_SLACK = 1024


class Timers:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._heap: list[tuple[int, int, Hashable]] = []
        self._live: dict[Hashable, tuple[int, int, Callable[[int], None]]] = {}
        self._seq = itertools.count()
        self._handle: asyncio.TimerHandle | None = None
        self._handle_at: int | None = None
        self._due_soon = False
        if isinstance(clock, ManualClock):
            clock.drive(self)

    def schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[int], None]) -> None:
        """Arm (or re-arm) ``key``; ``callback(now_ms)`` runs once at or after ``deadline_ms``."""
        seq = next(self._seq)
        self._live[key] = (deadline_ms, seq, callback)
        heap = self._heap
        if len(heap) > 2 * len(self._live) + _COMPACT_SLACK:
            # Re-arming leaves the old entry in the heap until its deadline; every heartbeat
            # re-arms a session timer, so rebuild from the live entries once most are stale.
            heap[:] = [(d, s, k) for k, (d, s, _) in self._live.items()]
            heapq.heapify(heap)
        else:
            heapq.heappush(heap, (deadline_ms, seq, key))
        self._rearm()

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def deadline(self, key: Hashable) -> int | None:
        entry = self._live.get(key)
        return None if entry is None else entry[0]

    def next_deadline(self) -> int | None:
        """The earliest armed deadline (cancelled and re-armed entries skipped)."""
        while self._heap:
            deadline, seq, key = self._heap[0]
            entry = self._live.get(key)
            if entry is not None and entry[1] == seq:
                return deadline
            heapq.heappop(self._heap)
        return None

    def __len__(self) -> int:
        return len(self._live)

    def fire_due(self, now_ms: int | None = None) -> None:
        now = self._clock.now_ms() if now_ms is None else now_ms
        while self._heap and self._heap[0][0] <= now:
            _, seq, key = heapq.heappop(self._heap)
            entry = self._live.get(key)
            if entry is None or entry[1] != seq:
                continue  # cancelled or re-armed since
            del self._live[key]
            entry[2](now)
        self._rearm()

    def close(self) -> None:
        self._live.clear()
        self._heap.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _rearm(self) -> None:
        if self._clock.manual:
            self._fire_soon_if_due()
            return
        while self._heap and self._heap[0][2] not in self._live:
            heapq.heappop(self._heap)
        if not self._heap:
            return
        first = self._heap[0][0]
        if self._handle is not None and self._handle_at is not None and self._handle_at <= first:
            return
        if self._handle is not None:
            self._handle.cancel()
        loop = asyncio.get_running_loop()
        delay = max(0, first - self._clock.now_ms()) / 1000
        self._handle = loop.call_later(delay, self._wake)
        self._handle_at = first

    def _fire_soon_if_due(self) -> None:
        first = self.next_deadline()
        if self._due_soon or first is None or first > self._clock.now_ms():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a pure test without a loop: advance() fires it
            return
        self._due_soon = True
        loop.call_soon(self._fire_due_now)

    def _fire_due_now(self) -> None:
        self._due_soon = False
        self.fire_due()

    def _wake(self) -> None:
        self._handle = None
        self._handle_at = None
        self.fire_due()
