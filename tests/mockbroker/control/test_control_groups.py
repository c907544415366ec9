"""The control API over both kinds of group, pure coordinator on a ManualClock: listing and
describing classic and KIP-848 consumer groups, waiting for a consumer group's states and for its
members to reconcile, expiring a session and forcing a rebalance of each kind through the
coordinators' public entry points (the same events as the real thing), and committed offsets of a
consumer group."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from mockbroker.control import ConsumerGroupSnapshot, ControlError, GroupListing, GroupSnapshot
from mockbroker.events import Event
from mockbroker_assignors.types import ClusterMetadata, GroupSpec, TargetAssignment
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness
from tests.mockbroker.coordinators.groups_support import Harness

SESSION = 10_000  # mockbroker's group.consumer.session.timeout.ms
SCRIPTED = "tests.mockbroker.control.test_control_groups:ScriptedAssignor"


class ScriptedAssignor:
    """A server assignor plugin whose answer the test picks: "modulo" deals partition p to the
    (p + shift) mod n-th member in member-id order (so shifting moves every partition), "fail"
    raises (a plugin's own failure)."""

    name = "scripted"
    mode: ClassVar[str] = "modulo"
    shift: ClassVar[int] = 0

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
        if ScriptedAssignor.mode == "fail":
            raise RuntimeError("the scripted assignor was told to fail")
        members = sorted(group.members)
        result: TargetAssignment = {m: {} for m in members}
        for topic in sorted(cluster.topics):
            for p in range(cluster.partitions_for(topic)):
                owner = members[(p + ScriptedAssignor.shift) % len(members)]
                result[owner][topic] = result[owner].get(topic, frozenset()) | {p}
        return result


@pytest.fixture(autouse=True)
def _reset_scripted() -> None:
    ScriptedAssignor.mode, ScriptedAssignor.shift = "modulo", 0


def stable_pair(h: ConsumerHarness) -> None:
    h.cg_join("a")
    h.cg_join("b")
    h.converge("a", "b")


def event_shape(events: list[Event]) -> list[tuple[str, str | None, object]]:
    """What an expiry leaves in the log, without the times and the wording of reasons."""
    return [(e.type, e.member_id, e.details.get("cause") or e.details.get("to_state") or e.details.get("group_epoch")) for e in events]


# -- listing and describing ------------------------------------------------------------------------------------------


async def test_groups_lists_classic_and_consumer_groups_with_their_type() -> None:
    h = ConsumerHarness()
    h.stable_group("old-style")
    stable_pair(h)
    listed = await h.cluster.control.groups()
    assert listed == {
        "g": GroupListing("g", "consumer", "Stable", "consumer"),
        "old-style": GroupListing("old-style", "classic", "Stable", "consumer"),
    }
    assert list(listed) == ["g", "old-style"]


async def test_describe_group_is_typed_by_group_kind() -> None:
    h = ConsumerHarness()
    leader, _ = h.stable_group("old-style")
    classic = await h.cluster.control.describe_group("old-style")
    assert isinstance(classic, GroupSnapshot) and classic.type == "classic" and classic.leader_id == leader
    assert classic.to_json()["type"] == "classic"

    h.cg_join("a", assignor="range")
    h.cg_join("b")  # b's target is still held by a: b waits (UNRELEASED_PARTITIONS)
    snap = await h.cluster.control.describe_group("g")
    assert isinstance(snap, ConsumerGroupSnapshot)
    assert (snap.type, snap.state, snap.group_epoch, snap.assignment_epoch, snap.assignor) == ("consumer", "Reconciling", 3, 3, "range")
    assert snap.generation_id == 3 and snap.subscribed_topics == {"t": 6} and not snap.reconciled
    a, b = snap.member(member_id="a"), snap.member(member_id="b")
    assert (a.member_epoch, a.state, a.assigned, a.target, a.server_assignor) == (2, "STABLE", {"t": (0, 1, 2, 3, 4, 5)}, {"t": (0, 1, 2)}, "range")
    assert (b.member_epoch, b.state, b.assigned, b.target) == (3, "UNRELEASED_PARTITIONS", {}, {"t": (3, 4, 5)})
    assert snap.target_assignment("t") == {"a": (0, 1, 2), "b": (3, 4, 5)}

    # a heartbeats with all it owns: it must first give up 3-5 (pending revocation)
    h.cg_heartbeat("a", 2, {"t": [0, 1, 2, 3, 4, 5]})
    a = (await h.cluster.control.describe_group("g")).member(member_id="a")  # type: ignore[union-attr]
    assert (a.member_epoch, a.state, a.assigned, a.pending_revocation) == (2, "UNREVOKED_PARTITIONS", {"t": (0, 1, 2)}, {"t": (3, 4, 5)})

    h.converge("a", "b")
    snap = await h.cluster.control.describe_group("g")
    assert isinstance(snap, ConsumerGroupSnapshot) and snap.state == "Stable" and snap.reconciled
    assert snap.assignment("t") == {"a": (0, 1, 2), "b": (3, 4, 5)}
    assert snap.to_json()["members"][0]["assigned"] == {"t": (0, 1, 2)}
    assert await h.cluster.control.describe_group("nobody") is None


async def test_describe_group_shows_the_groups_resolved_regexes() -> None:
    """ConsumerGroup.resolved_regexes in the snapshot: each member's regex and the topics it
    matched at the last resolution, under an authorizer only those the member may DESCRIBE; a
    regex no member subscribes to any more is gone."""
    h = ConsumerHarness({"orders-a": 2, "orders-b": 2, "payments": 1})
    h.describable = lambda names: [n for n in names if n != "orders-b"]  # the principal's DESCRIBE ACLs
    h.cg_join("a", regex="orders-.*")
    h.cg_join("b", topics=["payments"], regex="pay.*")
    snap = await h.cluster.control.describe_group("g")
    assert isinstance(snap, ConsumerGroupSnapshot)
    assert snap.resolved_regexes == {"orders-.*": ("orders-a",), "pay.*": ("payments",)}
    assert snap.to_json()["resolved_regexes"] == {"orders-.*": ("orders-a",), "pay.*": ("payments",)}
    assert snap.member(member_id="a").subscribed_topic_regex == "orders-.*"
    h.cg_leave("b")
    h.cg_heartbeat("a", h.member("a")["member_epoch"])
    snap = await h.cluster.control.describe_group("g")
    assert isinstance(snap, ConsumerGroupSnapshot) and snap.resolved_regexes == {"orders-.*": ("orders-a",)}


# -- waiting ---------------------------------------------------------------------------------------------------------


async def test_wait_for_group_follows_a_consumer_group_to_every_member_reconciled() -> None:
    h = ConsumerHarness()
    control = h.cluster.control
    reconciling = asyncio.create_task(control.wait_for_group("g", "Reconciling", members=2, timeout=5))
    reconciled = asyncio.create_task(control.wait_for_group("g", members=2, reconciled=True, group_type="consumer", timeout=5))
    h.cg_join("a")
    await asyncio.sleep(0)
    h.cg_join("b")
    seen = await reconciling
    assert seen.state == "Reconciling" and not reconciled.done()
    h.converge("a", "b")
    done = await reconciled
    assert isinstance(done, ConsumerGroupSnapshot) and done.state == "Stable" and done.reconciled
    assert sorted(len(m.assigned["t"]) for m in done.members) == [3, 3]
    assert (await control.wait_for_group("g", generation_at_least=3, timeout=1)).generation_id == 3


async def test_wait_for_group_refuses_what_cannot_be() -> None:
    h = ConsumerHarness()
    h.stable_group("old-style")
    control = h.cluster.control
    with pytest.raises(ValueError, match="unknown group state 'Stabel'"):
        await control.wait_for_group("g", "Stabel")
    with pytest.raises(ValueError, match="unknown group type"):
        await control.wait_for_group("g", group_type="sharing")
    with pytest.raises(ControlError, match="classic group; reconciled=True"):
        await control.wait_for_group("old-style", reconciled=True, timeout=1)
    with pytest.raises(TimeoutError, match="consumer old-style Stable; last seen: GroupSnapshot"):
        await control.wait_for_group("old-style", group_type="consumer", timeout=0.05)


# -- expire_session --------------------------------------------------------------------------------------------------


async def test_expire_session_fences_a_consumer_group_member_as_its_timer_would() -> None:
    by_control, by_clock = ConsumerHarness(), ConsumerHarness()
    for h in (by_control, by_clock):
        stable_pair(h)
    since = [await h.cluster.control.last_event_seq() for h in (by_control, by_clock)]

    assert await by_control.cluster.control.expire_session("g", client_id="client", member_id="a") == "a"
    by_clock.advance(SESSION - 1)  # b alone heartbeats on; a falls silent and its session expires
    b = by_clock.member("b")
    assert by_clock.cg_heartbeat("b", b["member_epoch"], b["assigned"]).error_code == ErrorCode.NONE
    by_clock.advance(1)

    def consumer_events(h: ConsumerHarness, seq: int) -> list[Event]:
        return [e for e in h.cluster.events.filter(type="consumer_group.", since_seq=seq)]

    assert event_shape(consumer_events(by_control, since[0])) == event_shape(consumer_events(by_clock, since[1]))
    fenced = by_control.events("consumer_group.member_fenced")[-1]
    assert (fenced.member_id, fenced.details["cause"]) == ("a", "session_timeout")
    assert by_control.events("control.session_expired")[-1].member_id == "a"
    snap = by_control.snap()
    assert ([m["member_id"] for m in snap["members"]], snap["group_epoch"], snap["state"]) == (["b"], 4, "Assigning")

    # The member learns of it at its next heartbeat, and rejoins with epoch 0.
    assert by_control.cg_heartbeat("a", 3, {"t": [0, 1, 2]}).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert by_control.cg_join("a").member_epoch == 5
    # Its old session timer is gone: the old deadline passing fences nobody.
    by_control.advance(SESSION - 1)
    assert {m["member_id"] for m in by_control.snap()["members"]} == {"a", "b"}
    with pytest.raises(ControlError, match="0 members of g match"):
        await by_control.cluster.control.expire_session("g", "nobody")


async def test_expire_session_ends_a_static_members_temporary_leave() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    h.cg_join("b", instance="i-b")
    h.converge("a", "b")
    h.cg_leave("a", instance="i-a", epoch=-2)  # its partitions stay reserved for i-a
    snap = await h.cluster.control.describe_group("g")
    assert snap is not None and snap.member(instance_id="i-a").member_epoch == -2
    assert await h.cluster.control.expire_session("g", instance_id="i-a") == "a"
    assert h.cgroup().static_members == {"i-b": "b"}
    b = h.member("b")
    response = h.cg_heartbeat("b", b["member_epoch"], b["assigned"], instance="i-b")
    assert h.owned(response) == {"t": list(range(6))}  # b is given what i-a had


async def test_expire_session_of_a_classic_member_is_its_timer_firing() -> None:
    h = Harness()
    _, follower = h.stable_group()
    since = await h.cluster.control.last_event_seq()
    assert await h.cluster.control.expire_session("g", client_id="c1") == follower
    expired = h.events("member.expired")[-1]
    assert (expired.member_id, expired.details["kind"], h.state()) == (follower, "session_timeout", "PreparingRebalance")
    assert [e.type for e in h.cluster.events.filter(since_seq=since)] == ["control.session_expired", "member.expired", "group.transition"]
    assert h.heartbeat("g", follower, 1) == ErrorCode.UNKNOWN_MEMBER_ID

    # After heartbeats have moved its session timer's deadline, expiring it by hand still ends
    # that timer: nothing fires again at the deadline the heartbeats had reached.
    leader, other = h.stable_group("q")
    for _ in range(5):
        h.advance(1_000)
        assert h.heartbeat("q", leader, 1) == ErrorCode.NONE
        assert h.heartbeat("q", other, 1) == ErrorCode.NONE
    assert await h.cluster.control.expire_session("q", other) == other
    h.join("q", leader)  # the rebalance completes with the leader alone
    assert h.state("q") == "CompletingRebalance"
    h.advance(10_000)  # past the deadline the heartbeats had moved the expired session to
    expired = [e.member_id for e in h.events("member.expired", "q")]
    assert expired == [other, leader]  # the leader's own session (it never synced); other's only once

    parked_leader, _ = h.stable_group("p")
    h.join("p", parked_leader)  # parked in JoinGroup, waiting for the other: Kafka does not expire it there
    refused_since = await h.cluster.control.last_event_seq()
    with pytest.raises(ControlError, match="waiting in JoinGroup/SyncGroup"):
        await h.cluster.control.expire_session("p", parked_leader)
    assert h.cluster.events.filter("control.", since_seq=refused_since) == []  # a refused call records nothing
    with pytest.raises(ControlError, match=r"no group 'nobody'; groups are \['g', 'p', 'q'\]"):
        await h.cluster.control.expire_session("nobody", "m")


# -- force_rebalance -------------------------------------------------------------------------------------------------


async def test_force_rebalance_of_a_consumer_group_recomputes_the_target_at_a_new_epoch() -> None:
    h = ConsumerHarness(group_consumer_assignors=SCRIPTED)
    stable_pair(h)
    before = h.snap()
    assert (before["group_epoch"], before["state"]) == (3, "Stable")

    # The same input to a deterministic assignor: the same target, every member moves to epoch 4.
    assert await h.cluster.control.force_rebalance("g") == "Reconciling"
    snap = h.snap()
    assert (snap["group_epoch"], snap["assignment_epoch"]) == (4, 4)
    assert [m["target"] for m in snap["members"]] == [m["target"] for m in before["members"]]
    types = [e.type for e in h.cluster.events.filter(type="consumer_group.", since_seq=h.events("control.rebalance_forced")[-1].seq)]
    assert types == ["consumer_group.epoch_bumped", "consumer_group.target_assignment", "consumer_group.transition"]
    for m in ("a", "b"):
        response = h.cg_heartbeat(m, 3, h.member(m)["assigned"])
        assert (response.error_code, response.member_epoch, response.assignment) == (ErrorCode.NONE, 4, None)
    assert h.snap()["state"] == "Stable"

    # A new answer from the assignor: every partition changes hands, revoked before it is given.
    ScriptedAssignor.shift = 1
    await h.cluster.control.force_rebalance("g", reason="the test moved every partition")
    assert h.events("consumer_group.epoch_bumped")[-1].reason == "the test moved every partition"
    assert {m["member_id"]: m["target"] for m in h.snap()["members"]} == {"a": {"t": [1, 3, 5]}, "b": {"t": [0, 2, 4]}}
    owned = h.converge("a", "b")
    assert owned == {"a": {"t": [1, 3, 5]}, "b": {"t": [0, 2, 4]}}
    reconciled = [e.details for e in h.events("consumer_group.member_reconciled")]
    assert any(d["state"] == "UNREVOKED_PARTITIONS" for d in reconciled)


async def test_force_rebalance_of_a_consumer_group_refuses_an_empty_group_and_reports_a_failing_assignor() -> None:
    h = ConsumerHarness(group_consumer_assignors=SCRIPTED)
    h.cg_join("a")
    h.cg_leave("a")
    with pytest.raises(ControlError, match="is Empty; there is nothing to rebalance"):
        await h.cluster.control.force_rebalance("g")

    h.cg_join("a")
    ScriptedAssignor.mode = "fail"
    with pytest.raises(ControlError, match="consumer group g is Assigning: Failed to compute a new target assignment"):
        await h.cluster.control.force_rebalance("g")
    assert h.events("consumer_group.assignment_failed")
    assert h.cg_heartbeat("a", h.member("a")["member_epoch"], {"t": list(range(6))}).error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    ScriptedAssignor.mode = "modulo"
    assert h.cg_heartbeat("a", h.member("a")["member_epoch"], {"t": list(range(6))}).error_code == ErrorCode.NONE
    assert h.snap()["state"] == "Stable"


async def test_force_rebalance_of_a_classic_group() -> None:
    h = Harness()
    _, follower = h.stable_group()
    assert await h.cluster.control.force_rebalance("g", reason="a test rebalance") == "PreparingRebalance"
    assert h.events("group.transition")[-1].reason == "a test rebalance"
    assert h.heartbeat("g", follower, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    with pytest.raises(ControlError, match="is PreparingRebalance; only a Stable or CompletingRebalance group"):
        await h.cluster.control.force_rebalance("g")


# -- offsets ---------------------------------------------------------------------------------------------------------


async def test_committed_offsets_of_a_consumer_group() -> None:
    h = ConsumerHarness()
    stable_pair(h)
    control = h.cluster.control
    waiting = asyncio.create_task(control.wait_for_commit("g", "t", 3, offset=40, timeout=5))
    await asyncio.sleep(0)
    b = h.member("b")
    request = OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=b["member_epoch"], member_id="b",
        topics=[OffsetCommitRequestTopic("t", partitions=[OffsetCommitRequestPartition(p, 40 + p) for p in b["assigned"]["t"]])],
    )  # fmt: skip
    answered = h.groups.commit_offsets(h.now, request, api_version=9)
    assert {p.error_code for t in answered for p in t.partitions} == {ErrorCode.NONE}
    assert await waiting == {3: 43, 4: 44, 5: 45}
    assert await control.committed_offsets("g") == {"t": {3: 43, 4: 44, 5: 45}}
