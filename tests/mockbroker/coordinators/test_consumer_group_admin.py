"""KIP-848 consumer groups in the other group APIs, pure coordinator on a ManualClock:
ConsumerGroupDescribe (§10.5), OffsetCommit/OffsetFetch by member epoch (§8.1, §8.3, §10.6),
ListGroups, DeleteGroups and OffsetDelete (§8.4-§8.7, §10.7), classic and consumer groups sharing
one id space, the introspection snapshot, the event log, and ApiVersions."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker.dispatch.table import HANDLERS, advertised_versions
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness


def commit(h: ConsumerHarness, member_id: str, epoch: int, partitions: dict[int, int], version: int = 9) -> dict[int, ErrorCode]:
    request = OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=epoch, member_id=member_id,
        topics=[OffsetCommitRequestTopic("t", partitions=[OffsetCommitRequestPartition(p, o) for p, o in partitions.items()])],
    )  # fmt: skip
    answered = h.groups.commit_offsets(h.now, request, api_version=version)
    return {p.partition_index: p.error_code for t in answered for p in t.partitions}


def two_stable_members(h: ConsumerHarness) -> None:
    h.cg_join("a")
    h.cg_join("b")
    h.converge("a", "b")


# -- ConsumerGroupDescribe ---------------------------------------------------------------------------------


def test_describe_shows_epochs_members_current_and_target() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    h.cg_join("b")
    described = h.consumer.consumer_group_describe("g")
    assert (described.error_code, described.group_state, described.group_epoch, described.assignment_epoch) == (0, "Reconciling", 3, 3)
    assert described.assignor_name == "uniform"
    a, b = described.members
    assert (a.member_id, a.instance_id, a.member_epoch, a.member_type, a.client_host) == ("a", "i-a", 2, 1, "/127.0.0.1")
    assert a.subscribed_topic_names == ["t"]
    topic_id = h.cluster.topics["t"].topic_id
    assert [(tp.topic_id, tp.topic_name, tp.partitions) for tp in a.assignment.topic_partitions] == [(topic_id, "t", list(range(6)))]
    assert [len(tp.partitions) for tp in a.target_assignment.topic_partitions] == [3]
    assert b.assignment.topic_partitions == [] and [len(tp.partitions) for tp in b.target_assignment.topic_partitions] == [3]


def test_describe_errors() -> None:
    h = ConsumerHarness()
    assert h.consumer.consumer_group_describe("").error_code == ErrorCode.INVALID_GROUP_ID
    assert h.consumer.consumer_group_describe("nope").error_code == ErrorCode.GROUP_ID_NOT_FOUND
    h.commit("classic", {("t", 0): 1})
    described = h.consumer.consumer_group_describe("classic")
    assert described.error_code == ErrorCode.GROUP_ID_NOT_FOUND and "not a consumer group" in (described.error_message or "")


# -- OffsetCommit / OffsetFetch ----------------------------------------------------------------------------


def test_offset_commit_by_member_epoch() -> None:
    h = ConsumerHarness()
    two_stable_members(h)
    epoch = h.member("a")["member_epoch"]
    mine = h.member("a")["assigned"]["t"]
    assert set(commit(h, "a", epoch, {mine[0]: 10}).values()) == {ErrorCode.NONE}
    assert h.groups.offsets.get("g", "t", mine[0]).committed_offset == 10  # type: ignore[union-attr]
    assert set(commit(h, "a", epoch + 1, {mine[0]: 11}).values()) == {ErrorCode.STALE_MEMBER_EPOCH}
    assert set(commit(h, "x", epoch, {mine[0]: 11}).values()) == {ErrorCode.UNKNOWN_MEMBER_ID}
    assert set(commit(h, "a", epoch, {mine[0]: 11}, version=8).values()) == {ErrorCode.UNSUPPORTED_VERSION}
    assert set(commit(h, "", -1, {mine[0]: 11}).values()) == {ErrorCode.UNKNOWN_MEMBER_ID}  # not Empty


def test_offset_commit_with_an_older_epoch_is_checked_per_partition() -> None:
    h = ConsumerHarness()
    h.cg_join("a")  # epoch 2: all six partitions given at epoch 2
    h.cg_join("b")
    h.cg_heartbeat("a", 2, {"t": list(range(6))})  # revoking 3,4,5 (still pending revocation)
    h.cg_heartbeat("a", 2, {"t": [0, 1, 2]})  # now at epoch 3, keeping 0,1,2 given at epoch 2
    assert h.member("a")["member_epoch"] == 3
    errors = commit(h, "a", 2, {0: 5, 1: 5})
    assert errors == {0: ErrorCode.NONE, 1: ErrorCode.NONE}
    h.cg_heartbeat("b", 3, {})  # b gets 3,4,5 at epoch 3
    errors = commit(h, "b", 2, {3: 5})  # an epoch older than b's: 3 was given to b at epoch 3
    assert errors == {3: ErrorCode.STALE_MEMBER_EPOCH}
    assert h.groups.offsets.get("g", "t", 3) is None


def test_admin_commit_to_an_empty_consumer_group_and_fetch_validation() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_leave("a")
    assert h.snap()["state"] == "Empty"
    assert commit(h, "", -1, {0: 7}) == {0: ErrorCode.NONE}
    h.cg_join("b")
    consumer = h.consumer
    assert consumer.validate_offset_fetch("g", None, -1) is None  # admin
    assert consumer.validate_offset_fetch("g", "b", h.member("b")["member_epoch"]) is None
    assert consumer.validate_offset_fetch("g", "b", 99) == ErrorCode.STALE_MEMBER_EPOCH
    assert consumer.validate_offset_fetch("g", "x", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert consumer.validate_offset_fetch("classic-or-unknown", "x", 1) is None
    fetched = h.groups.fetch_offsets("g", [("t", [0, 1])])
    assert [(p.partition_index, p.committed_offset) for t in fetched.topics for p in t.partitions] == [(0, 7), (1, -1)]


# -- ListGroups, DeleteGroups, OffsetDelete, JoinGroup against a consumer group ------------------------------------


def test_list_groups_types_and_states() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.commit("simple", {("t", 0): 1})
    listed = {g.group_id: (g.protocol_type, g.group_state, g.group_type) for g in h.groups.list_groups()}
    assert listed == {"g": ("consumer", "Stable", "consumer"), "simple": ("", "Empty", "classic")}
    assert [g.group_id for g in h.groups.list_groups(types_filter=["Consumer"])] == ["g"]
    assert [g.group_id for g in h.groups.list_groups(types_filter=["classic"])] == ["simple"]
    assert [g.group_id for g in h.groups.list_groups(states_filter=[" stable "])] == ["g"]
    assert h.groups.list_groups(types_filter=["share"]) == []


def test_delete_only_when_empty_with_its_offsets() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    commit(h, "a", 2, {0: 3})
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP
    h.cg_leave("a")
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NONE
    assert "g" not in h.consumer.groups and h.groups.offsets.get("g", "t", 0) is None
    assert h.events("consumer_group.deleted")[-1].details == {"offsets_deleted": 1}
    assert h.groups.delete_group(h.now, "g") == ErrorCode.GROUP_ID_NOT_FOUND


def test_offset_delete_refuses_subscribed_topics_only() -> None:
    h = ConsumerHarness({"t": 2, "u": 1})
    h.cg_join("a")
    commit(h, "a", 2, {0: 3})
    error, topics = h.groups.delete_offsets(h.now, "g", [("t", [0]), ("u", [0])])
    assert error == ErrorCode.NONE
    assert {t.name: [p.error_code for p in t.partitions] for t in topics} == {
        "t": [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC], "u": [ErrorCode.NONE],
    }  # fmt: skip


def test_classic_join_to_a_consumer_group() -> None:
    # With migration disabled (KAFKA-20640); the mixed-group rules are in test_consumer_group_mixed.py.
    h = ConsumerHarness(group_consumer_migration_policy="disabled")
    h.cg_join("a")
    response = h.join("g")  # the classic Harness builder: a JoinGroup with an empty member id
    assert response.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL  # type: ignore[union-attr]
    h.cg_leave("a")
    again = h.join("g")  # an empty consumer group is replaced by a classic group
    assert again.error_code == ErrorCode.MEMBER_ID_REQUIRED  # type: ignore[union-attr]
    assert "g" in h.groups.groups and "g" not in h.consumer.groups


def test_empty_consumer_group_without_offsets_is_removed_by_the_cleanup_cycle() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_leave("a")
    h.advance(h.groups.config.offsets_retention_check_interval_ms)
    assert "g" not in h.consumer.groups


# -- introspection, events, ApiVersions ---------------------------------------------------------------------------


def test_snapshot_and_find_group() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_join("b")
    snap = h.groups.snapshot("g")
    assert snap is not None and (snap["group_type"], snap["state"], snap["group_epoch"], snap["assignment_epoch"]) == ("consumer", "Reconciling", 3, 3)
    b = next(m for m in snap["members"] if m["member_id"] == "b")
    assert (b["member_epoch"], b["state"], b["assigned"], len(b["target"]["t"])) == (3, "UNRELEASED_PARTITIONS", {}, 3)
    assert h.groups.find_group("g") is h.cgroup()
    assert h.groups.snapshot("nope") is None


def test_events_tell_the_story() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    types = [e.type for e in h.events("consumer_group.")]
    assert types == [
        "consumer_group.created", "consumer_group.member_joined", "consumer_group.member_updated",
        "consumer_group.subscription_metadata", "consumer_group.epoch_bumped", "consumer_group.target_assignment",
        "consumer_group.member_reconciled", "consumer_group.transition",
    ]  # fmt: skip
    reconciled = h.events("consumer_group.member_reconciled")[-1]
    assert reconciled.generation_id == 2 and reconciled.details["member_epoch"] == 2
    assert reconciled.details["assigned"] == reconciled.details["target"] == {"t": list(range(6))}


def test_api_versions_by_profile() -> None:
    kafka4 = MockCluster()
    kafka39 = MockCluster(kafka_version="3.9")
    assert advertised_versions(kafka4, HANDLERS[68]) == (0, 1)
    assert advertised_versions(kafka4, HANDLERS[69]) == (0, 1)
    assert advertised_versions(kafka39, HANDLERS[68]) == (0, 0)
    assert advertised_versions(kafka39, HANDLERS[69]) == (0, 0)
