"""Timers under a ManualClock: deadline order, cancel/re-arm, no drift for re-armed timers, and
postpone (a deadline moved in place) firing exactly as a re-armed timer would."""

from __future__ import annotations

import random
from collections.abc import Callable

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


# -- postpone: a deadline moved in place fires exactly as a re-armed timer would --------------------------------


def test_a_postponed_timer_fires_at_its_new_deadline_only() -> None:
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired: list[tuple[str, int]] = []
    timer = timers.schedule("s", 100, lambda now: fired.append(("s", now)))
    for now in range(10, 1000, 10):  # a heartbeat every 10 ms, each moving the deadline 100 ms on
        clock.advance(10)
        assert timers.postpone(timer, now + 100, now)
    assert clock.now_ms() == 990 and fired == []
    assert timers.deadline("s") == 1090 and timers.next_deadline() == 1090
    clock.advance(99)
    assert fired == []
    clock.advance(1)
    assert fired == [("s", 1090)]
    assert timers.next_deadline() is None and len(timers) == 0
    assert len(timers._heap) == 0  # one heap entry stood for it throughout, not one per move


def test_postpone_refuses_a_stale_timer_an_earlier_deadline_and_a_due_one() -> None:
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    timer = timers.schedule("s", 100, lambda now: None)
    assert not timers.postpone(timer, 99, 0)  # earlier: schedule() it instead
    assert not timers.postpone(timer, 50, 50)  # due already
    assert timers.deadline("s") == 100
    replaced = timers.schedule("s", 200, lambda now: None)
    assert not timers.postpone(timer, 300, 0)  # replaced by a new timer for the same key
    assert timers.postpone(replaced, 300, 0)
    timers.cancel("s")
    assert not timers.postpone(replaced, 400, 0)
    fired = timers.schedule("f", 10, lambda now: None)
    clock.advance(10)
    assert not timers.postpone(fired, 500, 10)  # it fired
    assert timers.next_deadline() is None


def test_postponed_timers_keep_the_arming_order_of_a_tie() -> None:
    """Two timers moved to the same deadline fire in the order they were moved, as two
    schedule() calls in that order would; the order they were first armed in does not count."""
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired: list[str] = []
    a = timers.schedule("a", 100, lambda now: fired.append("a"))
    b = timers.schedule("b", 150, lambda now: fired.append("b"))
    clock.advance(50)
    assert timers.postpone(b, 300, 50)
    assert timers.postpone(a, 300, 50)
    clock.advance(1000)
    assert fired == ["b", "a"]


def _replay(ops: list[tuple[str, str, int]], moved_in_place: bool) -> list[tuple[str, int]]:
    """Run ``ops`` (arm, rearm, cancel, advance) on fresh timers; re-arms either go through
    postpone (when it accepts) or through schedule, as before postpone existed."""
    clock = ManualClock(start_ms=0)
    timers = Timers(clock)
    fired: list[tuple[str, int]] = []
    handles = {}

    def callback(key: str) -> Callable[[int], None]:
        def fire(now: int) -> None:
            fired.append((key, now))
            assert clock.now_ms() == now

        return fire

    for op, key, ms in ops:
        now = clock.now_ms()
        if op == "arm":
            handles[key] = timers.schedule(key, now + ms, callback(key))
        elif op == "rearm":
            if timers.deadline(key) is None:
                continue  # only armed timers are re-armed, as a heartbeat re-arms a live session
            if not (moved_in_place and timers.postpone(handles[key], now + ms, now)):
                handles[key] = timers.schedule(key, now + ms, callback(key))
        elif op == "cancel":
            timers.cancel(key)
        else:
            clock.advance(ms)
    clock.advance(10_000)
    return fired


def test_postpone_fires_every_timer_at_the_instant_and_in_the_order_schedule_would() -> None:
    rng = random.Random(7)
    for _ in range(300):
        keys = [f"k{i}" for i in range(rng.randint(1, 6))]
        ops: list[tuple[str, str, int]] = []
        for _ in range(rng.randint(1, 60)):
            op = rng.choice(["arm", "rearm", "rearm", "rearm", "cancel", "advance"])
            # Small, coarse delays so that deadlines often tie and re-arms land on the same instant.
            ops.append((op, rng.choice(keys), rng.choice([0, 5, 10, 10, 20, 30])))
        assert _replay(ops, moved_in_place=True) == _replay(ops, moved_in_place=False), ops


async def test_on_the_event_loop_a_postponed_timer_wakes_at_its_old_deadline_and_waits_for_the_new() -> None:
    """A LoopClock-like clock (not manual): the loop's wake-up stays at the old deadline (postpone
    does not touch it); firing then finds nothing due and sets the wake-up at the new deadline."""

    class Clock:
        manual = False
        now = 1_000

        def now_ms(self) -> int:
            return self.now

    clock = Clock()
    timers = Timers(clock)
    fired: list[int] = []
    timer = timers.schedule("s", 1_100, fired.append)
    assert timers._handle_at == 1_100
    assert timers.postpone(timer, 1_500, 1_050)
    assert timers._handle_at == 1_100
    clock.now = 1_100
    timers._wake()
    assert fired == [] and timers._handle_at == 1_500
    clock.now = 1_500
    timers._wake()
    assert fired == [1_500] and timers._handle is None
    timers.close()
