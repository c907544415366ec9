"""kafka-group-semantics §8.1-§8.4: OffsetCommit, retention and expiry, OffsetFetch, OffsetDelete
(the coordinator's part; broker-level topic checks and version shaping are over the wire)."""

from __future__ import annotations

import pytest

from mockbroker.coordinators.classic.group import DEAD
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.offset_fetch import OffsetFetchResponsePartitions
from tests.mockbroker.coordinators.groups_support import Harness, answered, subscription

MINUTE = 60_000


def errors(response: list) -> dict[tuple[str, int], int]:  # type: ignore[type-arg]
    return {(t.name, p.partition_index): p.error_code for t in response for p in t.partitions}


# -- §8.1 OffsetCommit: who may commit ------------------------------------------------------------------------


def test_a_generation_minus_one_commit_creates_a_simple_group_and_is_stored() -> None:
    h = Harness()
    assert errors(h.commit("g", {("t", 0): 10, ("t", 1): 20})) == {("t", 0): 0, ("t", 1): 0}
    assert h.committed() == {("t", 0): 10, ("t", 1): 20}
    assert h.group().is_simple_group()
    assert h.groups.list_groups()[0].protocol_type == ""


@pytest.mark.parametrize(("version", "expected"), [(8, ErrorCode.ILLEGAL_GENERATION), (9, ErrorCode.GROUP_ID_NOT_FOUND)])
def test_an_unknown_group_with_a_generation_is_rejected_by_version(version: int, expected: ErrorCode) -> None:
    h = Harness()
    assert errors(h.commit("g", {("t", 0): 1, ("u", 3): 1}, generation=0, version=version)) == {("t", 0): expected, ("u", 3): expected}
    assert "g" not in h.groups.groups
    assert h.events("offset.commit_rejected")[0].details["error"] == expected.name


def test_an_empty_group_takes_generation_minus_one_commits_whatever_the_member_id() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1)
    h.leave("g", only)
    assert errors(h.commit("g", {("t", 0): 5}, member_id="anyone")) == {("t", 0): 0}


def test_a_dead_group_is_coordinator_not_available() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 5})
    h.groups.classic._transition(h.group(), DEAD, h.now, "unloaded")
    assert errors(h.commit("g", {("t", 0): 6})) == {("t", 0): ErrorCode.COORDINATOR_NOT_AVAILABLE}


def test_member_commits_are_validated_member_then_generation() -> None:
    h = Harness()
    _leader, follower = h.stable_group()
    assert errors(h.commit("g", {("t", 0): 1}, generation=1, member_id="stranger")) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert errors(h.commit("g", {("t", 0): 1}, generation=0, member_id=follower)) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert errors(h.commit("g", {("t", 0): 1}, generation=1, member_id=follower, instance="i")) == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }
    assert errors(h.commit("g", {("t", 0): 1}, generation=1, member_id=follower)) == {("t", 0): 0}


def test_manual_assignment_commits_to_an_active_group_are_unknown_member_id() -> None:
    h = Harness()
    h.stable_group()
    assert errors(h.commit("g", {("t", 0): 1})) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_generation_minus_one_with_a_member_id_in_an_active_group_is_illegal_generation() -> None:
    h = Harness()
    _leader, follower = h.stable_group()
    assert errors(h.commit("g", {("t", 0): 1}, member_id=follower)) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}


def test_completing_rebalance_refuses_and_preparing_rebalance_accepts_the_old_generation() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.join("g", leader)  # PreparingRebalance, generation still 1
    assert errors(h.commit("g", {("t", 0): 7}, generation=1, member_id=follower)) == {("t", 0): 0}
    h.join("g", follower)  # CompletingRebalance, generation 2
    assert errors(h.commit("g", {("t", 0): 8}, generation=2, member_id=follower)) == {
        ("t", 0): ErrorCode.REBALANCE_IN_PROGRESS
    }
    assert h.committed() == {("t", 0): 7}


# -- §8.1 per partition ---------------------------------------------------------------------------------------------


def test_metadata_longer_than_the_limit_fails_only_that_partition() -> None:
    h = Harness(offset_metadata_max_bytes=10)
    request = OffsetCommitRequest(
        group_id="g",
        topics=[
            OffsetCommitRequestTopic(
                "t",
                partitions=[
                    OffsetCommitRequestPartition(0, 1, committed_metadata="x" * 10),
                    OffsetCommitRequestPartition(1, 2, committed_metadata="x" * 11),
                    OffsetCommitRequestPartition(2, 3, committed_metadata=None),
                ],
            )
        ],
    )
    response = h.groups.commit_offsets(h.now, request, api_version=9)
    assert errors(response) == {("t", 0): 0, ("t", 1): ErrorCode.OFFSET_METADATA_TOO_LARGE, ("t", 2): 0}
    assert h.committed() == {("t", 0): 1, ("t", 2): 3}
    assert h.groups.offsets.get("g", "t", 2).metadata == ""  # null is stored as ""


def test_metadata_length_is_counted_in_utf16_code_units_like_java() -> None:
    h = Harness(offset_metadata_max_bytes=4)
    assert errors(h.commit("g", {("t", 0): 1}, metadata="ééé")) == {("t", 0): 0}  # 3 units, 6 UTF-8 bytes
    assert errors(h.commit("g", {("t", 0): 1}, metadata="😀😀😀")) == {("t", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE}  # 6 units


def test_offset_fields_as_stored_and_fetched() -> None:
    h = Harness()
    h.advance(1_234)
    request = OffsetCommitRequest(
        group_id="g",
        topics=[
            OffsetCommitRequestTopic(
                "t",
                partitions=[
                    OffsetCommitRequestPartition(0, 100, committed_leader_epoch=7, committed_metadata="m"),
                    OffsetCommitRequestPartition(1, 200, committed_leader_epoch=-1),
                ],
            )
        ],
    )
    h.groups.commit_offsets(h.now, request, api_version=9)
    stored = h.groups.offsets.get("g", "t", 0)
    assert stored is not None
    assert (stored.leader_epoch, stored.commit_timestamp_ms, stored.expire_timestamp_ms) == (7, h.now, None)
    fetched = h.groups.fetch_offsets("g", [("t", [0, 1, 2])])
    assert fetched.topics[0].partitions == [
        OffsetFetchResponsePartitions(0, 100, 7, "m", 0),
        OffsetFetchResponsePartitions(1, 200, -1, "", 0),
        OffsetFetchResponsePartitions(2, -1, -1, "", 0),
    ]


def test_v1_commit_timestamps_are_kept() -> None:
    h = Harness()
    request = OffsetCommitRequest(
        group_id="g", topics=[OffsetCommitRequestTopic("t", partitions=[OffsetCommitRequestPartition(0, 1, commit_timestamp=42)])]
    )
    h.groups.commit_offsets(h.now, request, api_version=1)
    assert h.groups.offsets.get("g", "t", 0).commit_timestamp_ms == 42  # type: ignore[union-attr]


# -- §8.2 retention and expiry ----------------------------------------------------------------------------------------


def test_a_simple_groups_offsets_expire_retention_after_the_commit_and_the_group_goes_with_them() -> None:
    h = Harness(offsets_retention_minutes=60, offsets_retention_check_interval_ms=MINUTE)
    h.commit("g", {("t", 0): 1})
    h.advance(59 * MINUTE)
    assert h.committed() == {("t", 0): 1}
    h.advance(MINUTE)  # the check at 60 minutes: now - commit >= retention
    assert h.committed() == {} and "g" not in h.groups.groups
    assert [e.type for e in h.events()][-3:] == ["offset.expired", "group.transition", "group.deleted"]


def test_an_empty_consumer_groups_offsets_expire_retention_after_it_became_empty() -> None:
    h = Harness(offsets_retention_minutes=60, offsets_retention_check_interval_ms=MINUTE)
    leader, follower = h.stable_group()
    h.commit("g", {("t", 0): 1}, generation=1, member_id=leader)  # t=0
    h.advance(5_000)
    h.leave("g", leader, follower)  # Empty at t=5s
    h.advance(60 * MINUTE - 5_000)  # the check at 60 min: 60 min after the commit, not after Empty
    assert h.committed() == {("t", 0): 1}
    h.advance(MINUTE)  # the check at 61 min
    assert h.committed() == {} and "g" not in h.groups.groups


def test_a_stable_consumer_group_keeps_offsets_of_subscribed_topics_and_expires_the_others() -> None:
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=MINUTE, group_min_session_timeout_ms=1)
    (member,) = h.stable_group(members=1, session=10 * MINUTE, protocols=(("range", subscription("t")),))
    h.commit("g", {("t", 0): 1, ("old", 0): 2}, generation=1, member_id=member)
    for _ in range(5):
        h.advance(MINUTE)
        h.heartbeat("g", member, 1)
    assert h.committed() == {("t", 0): 1}
    assert "g" in h.groups.groups


def test_other_protocol_types_never_expire_while_active() -> None:
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=MINUTE)
    (member,) = h.stable_group(members=1, session=10 * MINUTE, protocol_type="connect", protocols=(("default", b""),))
    h.commit("g", {("t", 0): 1}, generation=1, member_id=member)
    for _ in range(5):
        h.advance(MINUTE)
        h.heartbeat("g", member, 1)
    assert h.committed() == {("t", 0): 1}


def test_unknown_consumer_subscriptions_count_as_subscribed_to_everything() -> None:
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=MINUTE)
    (member,) = h.stable_group(members=1, session=10 * MINUTE, protocols=(("range", b"\xff"),))  # undecodable
    assert h.group().subscribed_topics is None and h.group().is_subscribed_to_topic("anything")
    h.commit("g", {("t", 0): 1}, generation=1, member_id=member)
    for _ in range(3):
        h.advance(MINUTE)
        h.heartbeat("g", member, 1)
    assert h.committed() == {("t", 0): 1}


def test_an_explicit_retention_expires_the_offset_at_commit_plus_retention() -> None:
    h = Harness(offsets_retention_check_interval_ms=MINUTE)  # 7-day broker retention
    h.commit("g", {("t", 0): 1}, retention=2 * MINUTE, version=2)
    assert h.groups.offsets.get("g", "t", 0).expire_timestamp_ms == h.now + 2 * MINUTE  # type: ignore[union-attr]
    h.advance(MINUTE)
    assert h.committed() == {("t", 0): 1}
    h.advance(MINUTE)
    assert h.committed() == {}


def test_an_empty_group_without_offsets_disappears_at_the_next_check() -> None:
    h = Harness()  # offsets.retention.check.interval.ms: 600000, Kafka's
    h.join("g")  # a MEMBER_ID_REQUIRED round trip, nothing more
    h.advance(599_999)
    assert "g" in h.groups.groups
    h.advance(1)
    assert "g" not in h.groups.groups
    assert h.events("group.deleted")[0].reason == "empty group with no offsets left, removed by the cleanup cycle"


def test_pending_transactional_offsets_keep_the_offset_and_the_group() -> None:
    h = Harness(offsets_retention_minutes=1, offsets_retention_check_interval_ms=MINUTE)
    h.commit("g", {("t", 0): 1})
    assert h.groups.commit_transactional_offsets(h.now, "g", 77, [("t", [(0, 5, -1, None)])]) == {("t", 0): 0}
    h.advance(3 * MINUTE)
    assert h.committed() == {("t", 0): 1} and "g" in h.groups.groups
    h.groups.complete_transaction(h.now, 77, commit=False)
    h.advance(MINUTE)
    assert "g" not in h.groups.groups


# -- §8.3 OffsetFetch -----------------------------------------------------------------------------------------------


def test_an_unknown_group_fetches_minus_one_with_no_error_and_no_topics_for_all() -> None:
    h = Harness()
    group = h.groups.fetch_offsets("nobody", [("t", [0, 1])])
    assert group.error_code == 0
    assert group.topics[0].partitions == [OffsetFetchResponsePartitions(0, -1, -1, "", 0), OffsetFetchResponsePartitions(1, -1, -1, "", 0)]
    assert h.groups.fetch_offsets("nobody", None).topics == []


def test_all_topics_returns_every_committed_partition() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 1, ("t", 2): 3, ("u", 0): 9})
    group = h.groups.fetch_offsets("g", None)
    assert {(t.name, p.partition_index, p.committed_offset) for t in group.topics for p in t.partitions} == {
        ("t", 0, 1),
        ("t", 2, 3),
        ("u", 0, 9),
    }


def test_a_classic_fetch_checks_no_member() -> None:
    h = Harness()
    h.stable_group()
    assert h.groups.fetch_offsets("g", [("t", [0])]).error_code == 0


def test_require_stable_reports_pending_transactional_offsets_as_unstable() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 1})
    h.groups.commit_transactional_offsets(h.now, "g", 5, [("t", [(0, 9, -1, "")])])
    stable = h.groups.fetch_offsets("g", [("t", [0])], require_stable=True).topics[0].partitions[0]
    assert stable == OffsetFetchResponsePartitions(0, -1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT)
    relaxed = h.groups.fetch_offsets("g", [("t", [0])]).topics[0].partitions[0]
    assert relaxed.committed_offset == 1  # the last committed value; pending stays invisible
    h.groups.complete_transaction(h.now, 5, commit=True)
    assert h.groups.fetch_offsets("g", [("t", [0])], require_stable=True).topics[0].partitions[0].committed_offset == 9


# -- §8.4 OffsetDelete -------------------------------------------------------------------------------------------------


def test_offset_delete_group_level_errors() -> None:
    h = Harness()
    assert h.groups.delete_offsets(h.now, "", [("t", [0])]) == (ErrorCode.INVALID_GROUP_ID, [])
    assert h.groups.delete_offsets(h.now, "g", [("t", [0])]) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
    h.stable_group(protocol_type="connect", protocols=(("default", b""),))
    assert h.groups.delete_offsets(h.now, "g", [("t", [0])]) == (ErrorCode.NON_EMPTY_GROUP, [])


def test_offset_delete_refuses_subscribed_topics_of_an_active_consumer_group() -> None:
    h = Harness()
    leader, _ = h.stable_group(protocols=(("range", subscription("t")),))
    h.commit("g", {("t", 0): 1, ("u", 0): 2}, generation=1, member_id=leader)
    error, topics = h.groups.delete_offsets(h.now, "g", [("t", [0]), ("u", [0, 1])])
    assert error == ErrorCode.NONE
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in topics] == [
        ("t", [(0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)]),
        ("u", [(0, 0), (1, 0)]),  # deleting nothing is not an error
    ]
    assert h.committed() == {("t", 0): 1}
    assert h.events("offset.deleted")[0].details["partitions"] == ["u-0"]


def test_offset_delete_on_an_empty_group_deletes_anything() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 1})
    assert h.groups.delete_offsets(h.now, "g", [("t", [0])])[0] == ErrorCode.NONE
    assert h.committed() == {}


def test_offset_delete_removes_pending_transactional_offsets_too() -> None:
    h = Harness()
    h.commit("g", {("t", 1): 1})
    h.groups.commit_transactional_offsets(h.now, "g", 5, [("t", [(0, 9, -1, "")])])
    h.groups.delete_offsets(h.now, "g", [("t", [0])])
    assert not h.groups.offsets.has_pending("g", "t", 0)


def test_deleting_a_topic_deletes_its_offsets() -> None:
    h = Harness()
    h.cluster.create_topic("t", 2)
    h.commit("g", {("t", 0): 1, ("u", 0): 2})
    h.cluster.delete_topic("t")
    assert h.committed() == {("u", 0): 2}
    assert answered(h.groups.fetch_offsets("g", [("t", [0])])).topics[0].partitions[0].committed_offset == -1
