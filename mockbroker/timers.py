"""Timers: the only place that waits. Deadlines in clock milliseconds, keyed so they can be
re-armed or cancelled (a member's session timer is re-armed by every heartbeat).

With a LoopClock one asyncio TimerHandle is kept for the earliest deadline. With a ManualClock
nothing waits at all: due timers fire inside ``ManualClock.advance``; one armed for a deadline
that is already due (group.initial.rebalance.delay.ms = 0, say) fires at the next turn of the
running event loop, as it would in real time, so real clients do not wait for an advance().

Timers fire in (deadline, arming order) order. ``postpone`` moves an armed timer to a later
deadline without touching the heap (a heartbeat is one store, not a closure and a heap push):
the timer's old heap entry stays where it is, and when it comes up it is queued again at the
timer's current deadline and arming order. Entries only ever move later and each is fixed up
before anything behind it fires, so every timer fires at exactly the instant, and in exactly
the order, that cancelling and re-arming it with ``schedule`` would have given.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Hashable

from mockbroker.clock import Clock, ManualClock

# Stale heap entries tolerated (beyond twice the live ones) before the heap is rebuilt.
_COMPACT_SLACK = 1024


class Timer:
    """One armed deadline, as ``Timers.schedule`` returns it (for ``Timers.postpone``).

    ``seq`` is its place in arming order among timers of the same deadline; the heap entry that
    stands for it is ``(deadline, seq, timer)`` as they were when it was queued, so an entry whose
    seq differs from the timer's is a postponed one. ``armed`` turns False when it fires, is
    cancelled or is replaced, which makes its heap entry stale."""

    __slots__ = ("armed", "callback", "deadline", "key", "seq")

    def __init__(self, key: Hashable, deadline_ms: int, seq: int, callback: Callable[[int], None]) -> None:
        self.key = key
        self.deadline = deadline_ms
        self.seq = seq
        self.callback = callback
        self.armed = True


class Timers:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        # One entry per armed timer (plus stale ones); the seq makes entries unique, so the
        # Timer itself is never compared.
        self._heap: list[tuple[int, int, Timer]] = []
        self._live: dict[Hashable, Timer] = {}
        self._seq = itertools.count()
        self._handle: asyncio.TimerHandle | None = None
        self._handle_at: int | None = None
        self._due_soon = False
        if isinstance(clock, ManualClock):
            clock.drive(self)

    def schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[int], None]) -> Timer:
        """Arm (or re-arm) ``key``; ``callback(now_ms)`` runs once at or after ``deadline_ms``."""
        seq = next(self._seq)
        timer = Timer(key, deadline_ms, seq, callback)
        live = self._live
        old = live.get(key)
        if old is not None:
            old.armed = False
        live[key] = timer
        heap = self._heap
        if len(heap) > 2 * len(live) + _COMPACT_SLACK:
            # A re-armed or cancelled timer leaves its old entry in the heap until its deadline;
            # rebuild from the live timers once most entries are stale.
            heap[:] = [(t.deadline, t.seq, t) for t in live.values()]
            heapq.heapify(heap)
        else:
            heapq.heappush(heap, (deadline_ms, seq, timer))
        self._rearm()
        return timer

    def postpone(self, timer: Timer, deadline_ms: int, now_ms: int) -> bool:
        """Move ``timer`` to ``deadline_ms`` with the same callback: what ``schedule(timer.key,
        deadline_ms, timer.callback)`` would do, arming order included, for the price of two
        stores. False, and nothing done, when the timer is no longer armed, or the new deadline
        is earlier than its current one or already due at ``now_ms``: then call ``schedule``."""
        if not timer.armed or deadline_ms < timer.deadline or deadline_ms <= now_ms:
            return False
        timer.deadline = deadline_ms
        timer.seq = next(self._seq)
        # Nothing to re-arm: the heap entry and the loop's wake-up are at or before the old
        # deadline, which is before the new one.
        return True

    def cancel(self, key: Hashable) -> None:
        timer = self._live.pop(key, None)
        if timer is not None:
            timer.armed = False

    def deadline(self, key: Hashable) -> int | None:
        timer = self._live.get(key)
        return None if timer is None else timer.deadline

    def next_deadline(self) -> int | None:
        """The earliest armed deadline (stale entries dropped, postponed ones queued again)."""
        heap = self._heap
        while heap:
            deadline, seq, timer = heap[0]
            if not timer.armed:
                heapq.heappop(heap)
            elif timer.seq != seq:
                heapq.heapreplace(heap, (timer.deadline, timer.seq, timer))
            else:
                return deadline
        return None

    def __len__(self) -> int:
        return len(self._live)

    def fire_due(self, now_ms: int | None = None) -> None:
        now = self._clock.now_ms() if now_ms is None else now_ms
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, seq, timer = heap[0]
            if not timer.armed:  # cancelled or re-armed since
                heapq.heappop(heap)
            elif timer.seq != seq:  # postponed: queued again at its deadline, in arming order
                heapq.heapreplace(heap, (timer.deadline, timer.seq, timer))
            else:
                heapq.heappop(heap)
                timer.armed = False
                del self._live[timer.key]
                timer.callback(now)
        self._rearm()

    def close(self) -> None:
        for timer in self._live.values():
            timer.armed = False
        self._live.clear()
        self._heap.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _rearm(self) -> None:
        if self._clock.manual:
            self._fire_soon_if_due()
            return
        first = self.next_deadline()
        if first is None:
            return
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
