"""kafka-group-semantics §7: static membership (KIP-345) and SkipAssignment (KIP-814)."""

from __future__ import annotations

from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse
from tests.mockbroker.coordinators.groups_support import Harness, answered, assignment, subscription


def static_group(h: Harness, *instances: str, session: int = 30_000) -> dict[str, str]:
    """A Stable group of static members (the first leads): instance id -> member id."""
    parked = {i: h.join("g", instance=i, client_id=f"client-{i}", session=session) for i in instances}
    h.advance(0)
    ids = {i: answered(p).member_id for i, p in parked.items()}
    leader = ids[instances[0]]
    for i in instances[1:]:
        h.sync("g", ids[i], 1, instance=i)
    h.sync("g", leader, 1, {m: assignment(t=[n]) for n, m in enumerate(ids.values())}, instance=instances[0])
    assert h.state() == "Stable"
    return ids


def test_an_unknown_instance_is_added_like_any_new_member() -> None:
    h = Harness()
    parked = h.join("g", instance="i-1")
    assert isinstance(parked, Parked) and h.state() == "PreparingRebalance"
    assert h.group().static_members == {"i-1": "i-1-uuid-1"}


def test_a_follower_bouncing_in_stable_is_replaced_without_a_rebalance_and_keeps_its_assignment() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    h.advance(1_000)
    response = answered(h.join("g", instance="i-2", client_id="restarted"))
    new_id = response.member_id
    assert response == JoinGroupResponse(
        error_code=0, generation_id=1, protocol_type="consumer", protocol_name="range",
        leader=ids["i-1"], skip_assignment=False, member_id=new_id, members=[],
    )  # fmt: skip
    assert h.state() == "Stable" and h.group().generation_id == 1
    assert answered(h.sync("g", new_id, 1, instance="i-2")).assignment == assignment(t=[1])
    member = h.group().members[new_id]
    assert (member.client_id, member.assignment) == ("client-i-2", assignment(t=[1]))  # inherited
    assert h.events("member.replaced")[-1].details["old_member_id"] == ids["i-2"]


def test_a_replaced_member_gets_a_fresh_session() -> None:
    h = Harness()
    static_group(h, "i-1", "i-2", session=30_000)
    h.advance(20_000)
    h.heartbeat("g", h.group().static_members["i-1"], 1, "i-1")
    new_id = answered(h.join("g", instance="i-2", session=30_000)).member_id
    assert h.groups.timers.deadline(("classic-group-heartbeat", "g", new_id)) == h.now + 30_000


def test_a_replaced_leader_below_v9_is_told_the_old_leader_id_and_acts_as_a_follower() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    response = answered(h.join("g", instance="i-1", version=8))
    assert response.leader == ids["i-1"]  # its own *old* id
    assert response.members == [] and not response.skip_assignment
    assert h.group().leader_id == response.member_id  # it is the leader now, though
    assert answered(h.sync("g", response.member_id, 1, instance="i-1")).assignment == assignment(t=[0])


def test_a_replaced_leader_at_v9_skips_the_assignor() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    response = answered(h.join("g", instance="i-1", version=9))
    assert (response.leader, response.skip_assignment) == (response.member_id, True)
    assert {m.group_instance_id for m in response.members} == {"i-1", "i-2"}
    assert ids["i-1"] not in {m.member_id for m in response.members}


def test_a_replaced_follower_at_v9_gets_no_skip_assignment() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    response = answered(h.join("g", instance="i-2", version=9))
    assert (response.leader, response.skip_assignment, response.members) == (ids["i-1"], False, [])


def test_a_bounce_that_changes_the_selected_protocol_rebalances() -> None:
    h = Harness()
    h.join("g", instance="i-1", protocols=(("range", b""), ("roundrobin", b"")))
    h.advance(0)
    h.sync("g", "i-1-uuid-1", 1, {}, instance="i-1")
    assert h.group().protocol_name == "range"
    parked = h.join("g", instance="i-1", protocols=(("roundrobin", b""), ("range", b"")))
    # The sole member: the rebalance completes at once, with a new generation and protocol.
    assert (answered(parked).generation_id, answered(parked).protocol_name) == (2, "roundrobin")
    assert "selectedProtocol will change" in h.events("group.transition")[-2].reason


def test_a_bounce_in_completing_rebalance_rebalances() -> None:
    h = Harness()
    first = h.join("g", instance="i-1")
    second = h.join("g", instance="i-2")
    h.advance(0)
    assert h.state() == "CompletingRebalance"
    h.join("g", instance="i-2")
    assert h.state() == "PreparingRebalance"
    assert answered(first).error_code == 0 and answered(second).error_code == 0


def test_a_bounce_in_preparing_rebalance_parks_like_any_rejoin_and_fences_the_old_join() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    old_parked = h.join("g", ids["i-2"], instance="i-2", protocols=(("range", subscription("t", "u")),))
    assert h.state() == "PreparingRebalance"
    new_parked = h.join("g", instance="i-2")
    assert answered(old_parked) == JoinGroupResponse(
        error_code=ErrorCode.FENCED_INSTANCE_ID, member_id=ids["i-2"], protocol_type=None, protocol_name=None, leader="",
    )  # fmt: skip
    assert isinstance(new_parked, Parked) and not new_parked.done()
    h.join("g", ids["i-1"], instance="i-1")
    assert answered(new_parked).generation_id == 2


def test_the_old_id_is_fenced_everywhere() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2")
    new_id = answered(h.join("g", instance="i-2")).member_id
    old = ids["i-2"]
    assert h.heartbeat("g", old, 1, "i-2") == ErrorCode.FENCED_INSTANCE_ID
    assert answered(h.sync("g", old, 1, instance="i-2")).error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.leave("g", (old, "i-2"))[1][0].error_code == ErrorCode.FENCED_INSTANCE_ID
    committed = h.commit("g", {("t", 0): 1}, generation=1, member_id=old, instance="i-2")
    assert committed[0].partitions[0].error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat("g", old, 1) == ErrorCode.UNKNOWN_MEMBER_ID  # without its instance id
    assert h.heartbeat("g", new_id, 1, "i-2") == ErrorCode.NONE


def test_static_members_are_removed_by_session_timeout() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2", session=30_000)
    for _ in range(3):
        h.advance(10_000)
        h.heartbeat("g", ids["i-1"], 1, "i-1")
    assert ids["i-2"] not in h.group().members and "i-2" not in h.group().static_members


def test_an_absent_static_member_is_dropped_at_the_pending_sync_timeout() -> None:
    h = Harness()
    ids = static_group(h, "i-1", "i-2", session=120_000)
    h.join("g", ids["i-1"], instance="i-1", session=120_000, rebalance=10_000)  # the leader rejoins; i-2 stays away
    h.advance(60_000)  # the join phase ends at the (old) group rebalance timeout, 60000
    assert ids["i-2"] in h.group().members and h.state() == "CompletingRebalance"
    h.sync("g", ids["i-1"], 2, {}, instance="i-1")
    h.advance(60_000)  # the pending-sync timeout: i-2 never synced
    assert ids["i-2"] not in h.group().members
