"""kafka-group-semantics §4: SyncGroup, and the pending-sync timeout (§4.4)."""

from __future__ import annotations

import pytest

from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.sync_group import SyncGroupResponse
from tests.mockbroker.coordinators.groups_support import Harness, answered, assignment, error


def completing(h: Harness, members: int = 2, **kwargs: object) -> tuple[str, list[str]]:
    """A group just past its join phase: (leader, followers), everyone expected to sync."""
    parked = [h.join_new(client_id=f"c{i}", **kwargs) for i in range(members)]  # type: ignore[arg-type]
    h.advance(0)
    leader = answered(parked[0]).leader
    followers = [answered(p).member_id for p in parked if answered(p).member_id != leader]
    assert h.state() == "CompletingRebalance"
    return leader, followers


# -- §4.1 checks, in order ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("protocol_type", "protocol_name"), [(None, "range"), ("consumer", None), (None, None)])
def test_v5_requires_protocol_type_and_name_before_anything_else(protocol_type: str | None, protocol_name: str | None) -> None:
    h = Harness()
    # Even for an empty group id and an unknown group.
    assert error(h.sync("", "m", 0, protocol_type=protocol_type, protocol_name=protocol_name)) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_below_v5_the_protocol_fields_are_not_required() -> None:
    h = Harness()
    assert error(h.sync("g", "m", 0, version=4)) == ErrorCode.UNKNOWN_MEMBER_ID


def test_empty_group_id_is_invalid() -> None:
    assert error(Harness().sync("", "m", 0)) == ErrorCode.INVALID_GROUP_ID


def test_unknown_group_and_empty_group_are_unknown_member_id() -> None:
    h = Harness()
    assert error(h.sync("g", "m", 0)) == ErrorCode.UNKNOWN_MEMBER_ID
    h.join("g")  # Empty, one pending id
    assert error(h.sync("g", "m", 0)) == ErrorCode.UNKNOWN_MEMBER_ID


def test_membership_then_generation_then_protocol() -> None:
    h = Harness()
    _leader, follower = h.stable_group()
    assert error(h.sync("g", "stranger", 1)) == ErrorCode.UNKNOWN_MEMBER_ID
    assert error(h.sync("g", follower, 1, instance="i-unknown")) == ErrorCode.UNKNOWN_MEMBER_ID
    assert error(h.sync("g", follower, 2)) == ErrorCode.ILLEGAL_GENERATION
    assert error(h.sync("g", "stranger", 2)) == ErrorCode.UNKNOWN_MEMBER_ID  # membership first
    assert error(h.sync("g", follower, 1, protocol_type="connect")) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert error(h.sync("g", follower, 1, protocol_name="roundrobin")) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert error(h.sync("g", follower, 2, protocol_name="roundrobin")) == ErrorCode.ILLEGAL_GENERATION
    assert error(h.sync("g", follower, 1, version=4, protocol_name="roundrobin")) == ErrorCode.NONE


def test_a_dead_group_is_coordinator_not_available() -> None:
    from mockbroker.coordinators.classic.group import DEAD

    h = Harness()
    _leader, follower = h.stable_group()
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")
    assert error(h.sync("g", follower, 1)) == ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_a_fenced_static_member_gets_fenced_instance_id() -> None:
    h = Harness()
    first = h.join("g", instance="i-1")
    h.advance(0)
    old = answered(first).member_id
    h.sync("g", old, 1, {old: b"a"})
    h.join("g", instance="i-1")  # replaced
    assert error(h.sync("g", old, 1, instance="i-1")) == ErrorCode.FENCED_INSTANCE_ID


# -- §4.2 by state --------------------------------------------------------------------------------------------


def test_preparing_rebalance_is_rebalance_in_progress() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.join("g", leader)
    assert error(h.sync("g", follower, 1)) == ErrorCode.REBALANCE_IN_PROGRESS


def test_followers_park_until_the_leader_syncs_then_everyone_gets_its_own_bytes() -> None:
    h = Harness()
    leader, (f1, f2) = completing(h, members=3)
    p1, p2 = h.sync("g", f1, 1), h.sync("g", f2, 1)
    assert isinstance(p1, Parked) and isinstance(p2, Parked) and not p1.done()
    assert f1 not in h.group().pending_sync_members
    mine = h.sync("g", leader, 1, {leader: assignment(t=[0]), f1: assignment(t=[1]), f2: assignment(t=[2])})
    assert answered(mine) == SyncGroupResponse(error_code=0, protocol_type="consumer", protocol_name="range", assignment=assignment(t=[0]))
    assert answered(p1).assignment == assignment(t=[1]) and answered(p2).assignment == assignment(t=[2])
    assert h.state() == "Stable"


def test_a_member_missing_from_the_leaders_list_gets_empty_bytes_and_unknown_ids_are_ignored() -> None:
    h = Harness()
    leader, (follower,) = completing(h)
    parked = h.sync("g", follower, 1)
    h.sync("g", leader, 1, {leader: assignment(t=[0, 1]), "ghost": assignment(t=[5])})
    assert answered(parked).assignment == b""  # zero bytes, not an encoded empty assignment
    assert "ghost" not in h.group().members
    assigned = {e.member_id: e.details for e in h.events("member.assigned")}
    assert assigned[leader]["assignment"] == {"t": [0, 1]}
    assert assigned[follower]["missing_from_leader"] is True and assigned[follower]["assignment"] == {}


def test_assignments_sent_by_followers_are_ignored() -> None:
    h = Harness()
    leader, (follower,) = completing(h)
    parked = h.sync("g", follower, 1, {follower: assignment(t=[9])})
    h.sync("g", leader, 1, {follower: assignment(t=[1])})
    assert answered(parked).assignment == assignment(t=[1])


def test_in_stable_a_late_follower_gets_the_stored_assignment_at_once() -> None:
    h = Harness()
    leader, (follower,) = completing(h)
    h.sync("g", leader, 1, {leader: assignment(t=[0]), follower: assignment(t=[1])})
    late = h.sync("g", follower, 1)
    assert not isinstance(late, Parked)
    assert (late.error_code, late.assignment, late.protocol_name) == (0, assignment(t=[1]), "range")
    assert not h.group().pending_sync_members


def test_answering_parked_syncs_rearms_their_sessions() -> None:
    h = Harness()
    leader, (follower,) = completing(h, session=10_000)  # sessions armed until t=10000
    h.advance(9_000)
    assert h.heartbeat("g", leader, 1) == ErrorCode.NONE  # the leader's until 19000
    parked = h.sync("g", follower, 1)
    h.advance(2_000)  # t=11000: past the follower's session, but it is parked in SyncGroup: ignored
    assert follower in h.group().members
    h.sync("g", leader, 1)
    assert answered(parked).error_code == 0
    assert h.groups.timers.deadline(("classic-group-heartbeat", "g", follower)) == h.now + 10_000


# -- §4.3 other ways parked syncs end ---------------------------------------------------------------------------


def test_a_rebalance_in_completing_rebalance_answers_parked_syncs_rebalance_in_progress() -> None:
    h = Harness()
    _leader, (follower,) = completing(h)
    parked = h.sync("g", follower, 1)
    h.join_new(client_id="newcomer")
    assert answered(parked) == SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS, assignment=b"")


def test_a_replaced_static_member_parked_in_sync_is_fenced() -> None:
    h = Harness()
    other = h.join_new(client_id="d")  # joins first: the leader
    static = h.join("g", instance="i-1")
    h.advance(0)
    static_id = answered(static).member_id
    assert answered(other).leader != static_id
    parked = h.sync("g", static_id, 1, instance="i-1")
    h.join("g", instance="i-1")  # its replacement, while the group is CompletingRebalance
    assert answered(parked) == SyncGroupResponse(error_code=ErrorCode.FENCED_INSTANCE_ID, assignment=b"")


# -- §4.4 pending-sync timeout -------------------------------------------------------------------------------------


def test_a_leader_that_never_syncs_is_removed_at_the_rebalance_timeout() -> None:
    h = Harness()
    leader, (follower,) = completing(h, session=100_000, rebalance=30_000)
    parked = h.sync("g", follower, 1)
    h.advance(29_999)
    assert leader in h.group().members
    h.advance(1)
    assert leader not in h.group().members
    assert answered(parked).error_code == ErrorCode.REBALANCE_IN_PROGRESS
    removed = h.events("member.removed")
    assert [(e.member_id, e.details["cause"]) for e in removed] == [(leader, "pending_sync_expired")]
    assert h.events("group.transition")[-1].reason == f"Removing ['{leader}'] on pending sync request expiration"


def test_followers_that_never_sync_after_the_group_went_stable_are_removed_too() -> None:
    h = Harness()
    leader, (f1, f2) = completing(h, members=3, session=100_000, rebalance=30_000)
    h.sync("g", leader, 1, {})
    h.sync("g", f1, 1)
    assert h.state() == "Stable"
    h.advance(30_000)
    assert f2 not in h.group().members and h.state() == "PreparingRebalance"


def test_no_expiry_once_everyone_synced() -> None:
    h = Harness()
    leader, (follower,) = completing(h, session=100_000, rebalance=30_000)
    h.sync("g", follower, 1)
    h.sync("g", leader, 1)
    assert h.groups.timers.deadline(("classic-group-sync", "g")) is None
    h.advance(30_000)
    assert h.state() == "Stable" and len(h.group().members) == 2


def test_a_pending_sync_timer_of_an_old_generation_does_nothing() -> None:
    h = Harness()
    _leader, (_follower,) = completing(h, session=100_000, rebalance=30_000)
    h.groups.classic._expire_pending_sync("g", 0, h.now)  # a stale firing
    assert h.state() == "CompletingRebalance" and len(h.group().members) == 2
