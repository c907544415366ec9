"""Timers under a ManualClock: deadline order, cancel/re-arm, and no drift for re-armed timers."""

from __future__ import annotations

from mockbroker.clock import ManualClock
from mockbroker.timers import Timers


def test_timers_fire_in_deadline_order_and_respect_cancel_and_rearm() -> None:
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired: list[tuple[str, int]] = []
    timers.schedule("b", 200, lambda now: fired.append(("b", now)))
    timers.schedule("a", 100, lambda now: fired.append(("a", now)))
    timers.schedule("gone", 150, lambda now: fired.append(("gone", now)))
    timers.cancel("gone")
    timers.schedule("b", 250, lambda now: fired.append(("b2", now)))  # re-armed: the 200 entry is void
    clock.advance(99)
    assert fired == []
    clock.advance(1000)
    assert fired == [("a", 100), ("b2", 250)]
    assert clock.now_ms() == 1099
    assert timers.next_deadline() is None


def test_a_timer_rearmed_from_its_callback_keeps_its_cadence() -> None:
    """A periodic timer sees its own deadline as now, not the end of a long advance."""
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    ticks: list[int] = []

    def tick(now: int) -> None:
        ticks.append(now)
        assert clock.now_ms() == now  # the clock agrees with the timer while it runs
        timers.schedule("tick", now + 300, tick)

    timers.schedule("tick", 300, tick)
    clock.advance(1000)
    assert ticks == [300, 600, 900]
    clock.advance(200)
    assert ticks == [300, 600, 900, 1200]
