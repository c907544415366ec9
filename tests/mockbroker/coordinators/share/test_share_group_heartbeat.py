"""Pure KIP-932 share-group coordinator tests on a ManualClock: ShareGroupHeartbeat (join, epochs,
the SimpleAssignor, subscription changes, leave, session timeout), ShareGroupDescribe, ListGroups,
DeleteGroups and the group-id namespace shared with the other kinds."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.coordinators.share.assignor import simple_assign
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from mockbroker_protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from tests.mockbroker.coordinators.groups_support import Harness

Parts = dict[str, list[int]]


class ShareHarness(Harness):
    def __init__(self, topics: dict[str, int] | None = None, **settings: Any) -> None:
        super().__init__(**settings)
        self.share = self.groups.share
        for name, count in (topics if topics is not None else {"t": 3}).items():
            self.cluster.create_topic(name, count)

    def hb(self, member_id: str, epoch: int, topics: list[str] | None = None, group_id: str = "g",
           rack_id: str | None = None) -> ShareGroupHeartbeatResponse:  # fmt: skip
        request = ShareGroupHeartbeatRequest(
            group_id=group_id, member_id=member_id, member_epoch=epoch, rack_id=rack_id, subscribed_topic_names=topics
        )
        return self.groups.share_group_heartbeat(self.now, request, client_id="c", client_host="/127.0.0.1")

    def owned(self, response: ShareGroupHeartbeatResponse) -> Parts | None:
        if response.assignment is None:
            return None
        names = {t.topic_id: t.name for t in self.cluster.topics.values()}
        return {names[tp.topic_id]: sorted(tp.partitions) for tp in response.assignment.topic_partitions}

    def snap(self, group_id: str = "g") -> dict[str, Any]:
        snap = self.share.snapshot(group_id)
        assert snap is not None
        return snap


def test_first_member_gets_every_partition_with_the_group_epoch() -> None:
    h = ShareHarness()
    r = h.hb("m1", 0, ["t"])
    assert r.error_code == ErrorCode.NONE and r.member_id == "m1"
    assert r.member_epoch == 2
    assert r.heartbeat_interval_ms == h.groups.config.share_group_heartbeat_interval_ms
    assert h.owned(r) == {"t": [0, 1, 2]}
    assert h.snap()["state"] == "Stable"
    # A steady heartbeat: same epoch, no assignment sent.
    r = h.hb("m1", 2)
    assert (r.error_code, r.member_epoch, r.assignment) == (ErrorCode.NONE, 2, None)


def test_partitions_are_shared_when_members_outnumber_them() -> None:
    """SimpleAssignor: every member is hashed onto one partition, so with more members than
    partitions a partition goes to several members, and every member has at least one."""
    h = ShareHarness({"t": 1})
    for i in range(3):
        h.hb(f"m{i}", 0, ["t"])
    for i in range(3):
        assert h.hb(f"m{i}", _epoch(h, f"m{i}")).error_code == ErrorCode.NONE
    for m in h.snap()["members"]:
        assert m["assigned"] == {"t": [0]}, m
        assert m["member_epoch"] == h.snap()["assignment_epoch"] == 4


def _epoch(h: ShareHarness, member_id: str) -> int:
    return int(next(m for m in h.snap()["members"] if m["member_id"] == member_id)["member_epoch"])


def test_second_member_takes_partitions_at_once_and_the_first_keeps_its_own() -> None:
    """No revocation step: the first member's current partitions stay its own (step 3 of the
    assignor keeps the current assignment) and the second is hashed onto one of them."""
    h = ShareHarness({"t": 4})
    h.hb("a", 0, ["t"])
    r = h.hb("b", 0, ["t"])
    assert r.member_epoch == 3
    owned_b = h.owned(r)
    assert owned_b is not None and len(owned_b["t"]) == 1
    r = h.hb("a", 2)
    assert r.member_epoch == 3 and r.assignment is None  # its partitions did not change
    assert h.snap()["members"][0]["assigned"] == {"t": [0, 1, 2, 3]}


def test_simple_assign_round_robins_partitions_nobody_holds() -> None:
    import uuid

    t = uuid.uuid4()
    out = simple_assign({"a": [t], "b": [t]}, {t: 4}, {})
    assert set().union(*out.values()) == {(t, p) for p in range(4)}
    assert all(out.values())


def test_subscription_change_bumps_the_epoch_and_reassigns() -> None:
    h = ShareHarness({"t": 2, "u": 2})
    h.hb("a", 0, ["t"])
    r = h.hb("a", 2, ["t", "u"])
    assert r.member_epoch == 3
    assert h.owned(r) == {"t": [0, 1], "u": [0, 1]}
    assert [e.details["subscribed_topic_names"] for e in h.events("share_group.member_subscription")] == [["t", "u"]]


def test_a_topic_created_later_bumps_the_epoch() -> None:
    h = ShareHarness({"t": 1})
    h.hb("a", 0, ["t", "later"])
    h.cluster.create_topic("later", 2)
    r = h.hb("a", 2)
    assert r.member_epoch == 3 and h.owned(r) == {"later": [0, 1], "t": [0]}


@pytest.mark.parametrize(
    ("member_id", "group_id", "epoch", "topics", "rack", "message"),
    [
        (" ", "g", 0, ["t"], None, "MemberId can't be empty."),
        ("m", "", 0, ["t"], None, "GroupId can't be empty."),
        ("m", "g", 0, ["t"], " ", "RackId can't be empty."),
        ("m", "g", 0, None, None, "SubscribedTopicNames must be set in first request."),
        ("m", "g", 0, [], None, "SubscribedTopicNames must be set in first request."),
        ("m", "g", -2, None, None, "MemberEpoch is invalid."),
    ],
)
def test_invalid_requests(member_id: str, group_id: str, epoch: int, topics: list[str] | None, rack: str | None,
                          message: str) -> None:  # fmt: skip
    h = ShareHarness()
    r = h.hb(member_id, epoch, topics, group_id=group_id, rack_id=rack)
    assert (r.error_code, r.error_message) == (ErrorCode.INVALID_REQUEST, message)


def test_unknown_group_and_member_and_fenced_epochs() -> None:
    h = ShareHarness()
    assert h.hb("m", 2, group_id="nope").error_code == ErrorCode.GROUP_ID_NOT_FOUND
    h.hb("a", 0, ["t"])
    r = h.hb("b", 2)
    assert (r.error_code, r.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Member b is not a member of group g.")
    assert h.hb("a", 3).error_code == ErrorCode.FENCED_MEMBER_EPOCH  # ahead
    h.hb("b", 0, ["t"])
    h.hb("a", 2)  # a moves to epoch 3; its previous epoch 2 is still accepted once more
    assert _epoch(h, "a") == 3
    assert h.hb("a", 2).error_code == ErrorCode.NONE
    h.hb("c", 0, ["t"])
    h.hb("a", 3)  # epoch 4 now, previous 3
    assert h.hb("a", 2).error_code == ErrorCode.FENCED_MEMBER_EPOCH  # behind, not the previous


def test_leave_gives_epoch_minus_one_and_the_others_take_over() -> None:
    h = ShareHarness({"t": 2})
    h.hb("a", 0, ["t"])
    h.hb("b", 0, ["t"])
    r = h.hb("b", -1)
    assert (r.error_code, r.member_id, r.member_epoch) == (ErrorCode.NONE, "b", -1)
    assert [m["member_id"] for m in h.snap()["members"]] == ["a"]
    r = h.hb("a", 2)
    # a kept both partitions when b joined (b shared one), so nothing changes for it but the epoch.
    assert r.member_epoch == 4 and r.assignment is None
    assert h.snap()["members"][0]["assigned"] == {"t": [0, 1]}
    h.hb("a", -1)
    assert h.snap()["state"] == "Empty"
    assert [e.details["to_state"] for e in h.events("share_group.transition")] == ["Stable", "Empty"]
    assert h.hb("zz", -1).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_session_timeout_fences_the_member() -> None:
    h = ShareHarness()
    session = h.groups.config.share_group_session_timeout_ms
    h.hb("a", 0, ["t"])
    h.hb("b", 0, ["t"])
    h.advance(session - 1)
    h.hb("a", 2)  # a keeps its session; b says nothing
    h.advance(1)
    assert [m["member_id"] for m in h.snap()["members"]] == ["a"]
    fenced = h.events("share_group.member_fenced")
    assert [(e.member_id, e.details["cause"]) for e in fenced] == [("b", "session_timeout")]
    assert h.hb("b", 3).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    h.advance(session)
    assert h.snap()["state"] == "Empty"


def test_max_size() -> None:
    h = ShareHarness(group_share_max_size=1)
    h.hb("a", 0, ["t"])
    r = h.hb("b", 0, ["t"])
    assert (r.error_code, r.error_message) == (
        ErrorCode.GROUP_MAX_SIZE_REACHED, "The share group has reached its maximum capacity of 1 members."
    )
    assert h.hb("a", 2).error_code == ErrorCode.NONE


def test_describe() -> None:
    h = ShareHarness({"t": 2})
    h.hb("a", 0, ["t"], rack_id="r1")
    d = h.groups.share_group_describe("g")
    assert (d.error_code, d.group_state, d.group_epoch, d.assignment_epoch, d.assignor_name) == (0, "Stable", 2, 2, "simple")
    (m,) = d.members
    assert (m.member_id, m.rack_id, m.member_epoch, m.client_id, m.client_host) == ("a", "r1", 2, "c", "/127.0.0.1")
    assert [(tp.topic_name, tp.partitions) for tp in m.assignment.topic_partitions] == [("t", [0, 1])]
    missing = h.groups.share_group_describe("nope")
    assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
    assert h.groups.share_group_describe("").error_code == ErrorCode.INVALID_GROUP_ID


def test_list_and_delete_groups() -> None:
    h = ShareHarness()
    h.hb("a", 0, ["t"])
    listed = h.groups.list_groups((), ("share",))
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed] == [("g", "share", "Stable", "share")]
    assert h.groups.list_groups((), ("consumer",)) == []
    assert h.groups.list_groups(("empty",), ()) == []
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP
    h.hb("a", -1)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NONE
    assert "g" not in h.share.groups
    assert [e.type for e in h.events("share_group.deleted")] == ["share_group.deleted"]


def test_group_ids_are_not_shared_across_kinds() -> None:
    h = ShareHarness()
    h.hb("a", 0, ["t"])
    consumer = h.groups.consumer_group_heartbeat(
        h.now,
        ConsumerGroupHeartbeatRequest(group_id="g", member_id="x", member_epoch=0, rebalance_timeout_ms=1000,
                                      subscribed_topic_names=["t"], topic_partitions=[]),
        api_version=1, client_id="c", client_host="/h",
    )
    assert (consumer.error_code, consumer.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    h.groups.consumer_group_heartbeat(
        h.now,
        ConsumerGroupHeartbeatRequest(group_id="cg", member_id="x", member_epoch=0, rebalance_timeout_ms=1000,
                                      subscribed_topic_names=["t"], topic_partitions=[]),
        api_version=1, client_id="c", client_host="/h",
    )
    r = h.hb("a", 0, ["t"], group_id="cg")
    assert (r.error_code, r.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")
    d = h.groups.share_group_describe("cg")
    assert (d.error_code, d.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group cg is not a share group.")


def test_snapshots_keep_to_their_kind() -> None:
    """The router's snapshot is a consumer group's (the control API reads it as one); a share
    group's is the share coordinator's."""
    h = ShareHarness()
    h.hb("a", 0, ["t"])
    assert h.groups.snapshot("g") is None
    assert h.snap()["members"][0]["assigned"] == {"t": [0, 1, 2]}
