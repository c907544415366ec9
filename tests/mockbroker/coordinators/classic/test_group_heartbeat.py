"""kafka-group-semantics §5: Heartbeat, session expiry, and what re-arms a session."""

from __future__ import annotations

from mockbroker.coordinators.classic.group import DEAD
from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.errors import ErrorCode
from tests.mockbroker.coordinators.groups_support import Harness, answered


def session_deadline(h: Harness, member_id: str, group_id: str = "g") -> int | None:
    return h.groups.timers.deadline(("classic-group-heartbeat", group_id, member_id))


# -- checks, in order --------------------------------------------------------------------------------------------


def test_checks_in_order() -> None:
    h = Harness()
    assert h.heartbeat("", "m", 0) == ErrorCode.INVALID_GROUP_ID
    assert h.heartbeat("g", "m", 0) == ErrorCode.UNKNOWN_MEMBER_ID  # no such group
    _leader, follower = h.stable_group()
    assert h.heartbeat("g", "stranger", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", "stranger", 7) == ErrorCode.UNKNOWN_MEMBER_ID  # membership before generation
    assert h.heartbeat("g", follower, 0) == ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("g", follower, 1, instance="nobody") == ErrorCode.UNKNOWN_MEMBER_ID
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")
    assert h.heartbeat("g", follower, 1) == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_a_static_member_heartbeating_with_a_replaced_id_is_fenced() -> None:
    h = Harness()
    first = h.join("g", instance="i-1")
    h.advance(0)
    old = answered(first).member_id
    h.sync("g", old, 1, {})
    new = answered(h.join("g", instance="i-1")).member_id
    assert h.heartbeat("g", old, 1, instance="i-1") == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat("g", new, 1, instance="i-1") == ErrorCode.NONE


def test_empty_group_heartbeats_are_unknown_member_id() -> None:
    h = Harness()
    h.join("g")  # Empty, pending only
    pending = next(iter(h.group().pending_join_members))
    assert h.heartbeat("g", pending, 0) == ErrorCode.UNKNOWN_MEMBER_ID


# -- answers by state ---------------------------------------------------------------------------------------------


def test_preparing_rebalance_answers_rebalance_in_progress_and_rearms_the_session() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.join("g", leader)
    h.advance(4_000)
    assert h.heartbeat("g", follower, 1) == ErrorCode.REBALANCE_IN_PROGRESS  # the old generation is current
    assert session_deadline(h, follower) == h.now + 10_000


def test_completing_rebalance_new_generation_is_none_old_one_is_illegal() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.join("g", leader)
    h.join("g", follower)
    assert h.state() == "CompletingRebalance"
    assert h.heartbeat("g", follower, 2) == ErrorCode.NONE
    assert h.heartbeat("g", follower, 1) == ErrorCode.ILLEGAL_GENERATION


def test_stable_heartbeat_is_none_and_rearms() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.advance(9_999)
    assert h.heartbeat("g", follower, 1) == ErrorCode.NONE
    assert h.heartbeat("g", leader, 1) == ErrorCode.NONE
    h.advance(9_999)
    assert h.state() == "Stable" and len(h.group().members) == 2
    h.advance(1)  # 10000 after the last heartbeats
    assert h.state() == "Empty"


# -- session expiry ----------------------------------------------------------------------------------------------------


def test_a_silent_member_expires_after_its_session_timeout_and_the_group_rebalances() -> None:
    h = Harness()
    leader, follower = h.stable_group(session=10_000, rebalance=60_000)
    for _ in range(2):
        h.advance(4_000)
        assert h.heartbeat("g", leader, 1) == ErrorCode.NONE  # only the leader heartbeats
    h.advance(2_000)  # t=10000
    assert h.heartbeat("g", leader, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    # The follower's session was armed at t=0 (sync answer): it expired at 10000.
    assert follower not in h.group().members
    (expired,) = h.events("member.expired")
    assert (expired.member_id, expired.details["kind"], expired.time_ms - h.start_ms) == (follower, "session_timeout", 10_000)
    assert expired.reason == f"member {follower} session expired (10000 ms without a heartbeat)"
    assert h.state() == "PreparingRebalance"
    rejoin = answered(h.join("g", leader))
    assert rejoin.generation_id == 2 and [m.member_id for m in rejoin.members] == [leader]


def test_after_many_heartbeats_a_session_expires_exactly_one_timeout_after_the_last() -> None:
    """A heartbeat moves the armed timer's deadline (Timers.postpone) rather than arming a new
    one; the expiry instant is the same: the last heartbeat plus the session timeout."""
    h = Harness()
    leader, follower = h.stable_group(session=10_000, rebalance=60_000)
    timer = h.group().members[follower].session_timer
    for step in range(600):
        h.advance(1 + (step * 7919) % 9_000)  # irregular gaps, each within the session
        assert h.heartbeat("g", leader, 1) == ErrorCode.NONE
        assert h.heartbeat("g", follower, 1) == ErrorCode.NONE
        assert session_deadline(h, follower) == h.now + 10_000
    assert h.group().members[follower].session_timer is timer  # moved 600 times, never re-armed
    assert len(h.cluster.timers._heap) <= len(h.cluster.timers)  # one heap entry per timer, not per heartbeat
    last = h.now
    h.advance(5_000)
    assert h.heartbeat("g", leader, 1) == ErrorCode.NONE  # the leader alone goes on
    h.advance(4_999)
    assert follower in h.group().members and h.events("member.expired") == []
    h.advance(1)
    (expired,) = h.events("member.expired")
    assert (expired.member_id, expired.time_ms) == (follower, last + 10_000)
    assert h.state() == "PreparingRebalance"


def test_members_whose_sessions_end_at_the_same_instant_expire_in_the_order_of_their_last_heartbeats() -> None:
    """Timers due at the same instant fire in the order they were last armed (a heartbeat arms
    one); moving a deadline in place keeps that order, whatever order the members joined in."""
    h = Harness()
    ids = h.stable_group(members=4, session=10_000, rebalance=60_000)
    h.advance(2_000)
    order = [ids[2], ids[0], ids[3], ids[1]]
    for member in order:
        assert h.heartbeat("g", member, 1) == ErrorCode.NONE
    h.advance(10_000)
    assert [e.member_id for e in h.events("member.expired")] == order
    assert {e.time_ms - h.start_ms for e in h.events("member.expired")} == {12_000}


def test_a_heartbeat_after_an_ignored_expiry_arms_a_new_session_timer() -> None:
    """A timer that fired while its member was parked is spent: the next re-arm is a new timer."""
    h = Harness()
    leader, follower = h.stable_group(session=10_000, rebalance=60_000)
    spent = h.group().members[leader].session_timer
    h.advance(5_000)
    assert h.heartbeat("g", follower, 1) == ErrorCode.NONE  # follower until 15000
    h.join("g", leader)  # parked; its session ends at 10000, ignored there
    h.advance(5_000)
    assert session_deadline(h, leader) is None and spent is not None and not spent.armed
    h.join("g", follower)  # the join completes: both members' sessions are armed anew
    assert h.group().members[leader].session_timer is not spent
    assert session_deadline(h, leader) == h.now + 10_000


def test_expiry_of_a_member_parked_in_join_is_ignored_until_the_join_completes() -> None:
    h = Harness()
    leader, follower = h.stable_group(session=10_000, rebalance=60_000)
    h.advance(5_000)
    assert h.heartbeat("g", follower, 1) == ErrorCode.NONE  # follower until 15000
    parked = h.join("g", leader)  # t=5000: parked in JoinGroup; its session ends at 10000
    h.advance(5_000)
    assert leader in h.group().members  # ignored while parked
    assert session_deadline(h, leader) is None  # and not re-armed until the join ends
    h.join("g", follower)
    assert answered(parked).generation_id == 2
    assert session_deadline(h, leader) == h.now + 10_000


def test_an_expiring_member_in_preparing_rebalance_completes_the_join_when_everyone_else_joined() -> None:
    h = Harness()
    leader, f1, f2 = h.stable_group(members=3, session=10_000, rebalance=60_000)
    h.advance(5_000)
    h.heartbeat("g", leader, 1)
    h.heartbeat("g", f1, 1)
    p_leader = h.join("g", leader)
    p_f1 = h.join("g", f1)
    h.advance(5_000)  # t=10000: f2 never heartbeated nor rejoined
    assert answered(p_leader).generation_id == 2 and answered(p_f1).generation_id == 2
    assert f2 not in h.group().members


def test_a_new_members_parked_join_is_answered_unknown_member_id_when_it_expires() -> None:
    h = Harness()
    _leader, _follower = h.stable_group(session=400_000, rebalance=600_000)
    newcomer = h.join_new(client_id="n", session=400_000, rebalance=600_000)
    h.advance(300_000)
    assert answered(newcomer).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert answered(newcomer).member_id == ""


# -- what re-arms a session -----------------------------------------------------------------------------------------------


def test_join_completion_sync_answer_and_commits_rearm_the_session() -> None:
    h = Harness()
    parked = h.join_new(client_id="a", session=10_000)
    h.advance(0)
    member = answered(parked).member_id
    assert session_deadline(h, member) == h.now + 10_000  # join completion
    h.advance(3_000)
    h.sync("g", member, 1, {member: b""})
    assert session_deadline(h, member) == h.now + 10_000  # the sync answer
    h.advance(3_000)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=member)
    assert session_deadline(h, member) == h.now + 10_000  # an accepted commit in Stable


def test_a_commit_in_completing_rebalance_does_not_rearm() -> None:
    h = Harness()
    parked = h.join_new(client_id="a", session=10_000)
    h.advance(0)
    member = answered(parked).member_id
    before = session_deadline(h, member)
    h.advance(1_000)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=member)
    assert session_deadline(h, member) == before


def test_a_new_members_first_timer_is_the_5_minute_join_timeout() -> None:
    h = Harness()
    _leader, _follower = h.stable_group()
    newcomer = h.join_new(client_id="n")
    assert isinstance(newcomer, Parked)
    new_id = next(m for m in h.group().members if m.startswith("n-"))
    assert session_deadline(h, new_id) == h.now + 300_000
