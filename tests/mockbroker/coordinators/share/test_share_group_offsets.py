"""Pure tests of the share-group offset admin side (ShareGroupOffsets: Describe/Alter/
DeleteShareGroupOffsets) on a ManualClock, and OffsetCommit on a share group's id."""

from __future__ import annotations

import pytest

from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.share.offsets import DescribedOffset
from mockbroker.coordinators.share.partition import RecordState
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from tests.mockbroker.coordinators.share.test_share_group_heartbeat import ShareHarness


def no_hw(topic: str, partition: int) -> int | None:
    return None


def test_unknown_group_has_no_state() -> None:
    h = ShareHarness()
    offsets = h.groups.share_offsets
    assert offsets.describe("nobody", "t", [0, 1], no_hw) == [
        DescribedOffset(0, -1, 0, -1),
        DescribedOffset(1, -1, 0, -1),
    ]
    assert offsets.describe_all("nobody", no_hw) == {}
    assert "nobody" not in h.share.groups


def test_alter_creates_an_empty_group_and_sets_the_start_offsets() -> None:
    h = ShareHarness()
    offsets = h.groups.share_offsets
    offsets.alter(h.now, "g", {"t": {0: 5, 2: 7}})
    assert h.share.groups["g"].is_empty()
    assert offsets.describe("g", "t", [0, 1, 2], lambda t, p: 10) == [
        DescribedOffset(0, 5, 0, 5), DescribedOffset(1, -1, 0, -1), DescribedOffset(2, 7, 0, 3)
    ]  # fmt: skip
    assert offsets.describe_all("g", no_hw) == {
        "t": [DescribedOffset(0, 5, 0, -1), DescribedOffset(2, 7, 0, -1)]
    }
    assert h.events("share_group.offsets_altered", "g")[0].details["offsets"] == {"t": {0: 5, 2: 7}}


def test_lag_leaves_out_records_already_delivered() -> None:
    h = ShareHarness()
    offsets = h.groups.share_offsets
    offsets.alter(h.now, "g", {"t": {0: 0}})
    topic_id = h.cluster.topics["t"].topic_id
    sp = h.groups.share_partitions.partitions[("g", topic_id, 0)]
    sp.acquire("m", iter(range(0, 4)), max_records=4, max_in_flight=100, now_ms=h.now, lock_duration_ms=1000)
    sp.acknowledge(
        "m", [(2, 3, [1])], delivery_count_limit=5, now_ms=h.now, lock_duration_ms=1000, renew_allowed=False
    )
    assert {o: r.state for o, r in sp.in_flight.items()}[2] is RecordState.ACKNOWLEDGED
    assert offsets.describe("g", "t", [0], lambda t, p: 10) == [DescribedOffset(0, 0, 0, 8)]


def test_a_group_with_members_is_refused() -> None:
    h = ShareHarness()
    h.hb("m1", 0, ["t"])
    offsets = h.groups.share_offsets
    with pytest.raises(GroupError) as altered:
        offsets.alter(h.now, "g", {"t": {0: 1}})
    assert (
        altered.value.code == ErrorCode.NON_EMPTY_GROUP and altered.value.message == "The group is not empty."
    )
    with pytest.raises(GroupError) as deleted:
        offsets.delete(h.now, "g", ["t"])
    assert deleted.value.code == ErrorCode.NON_EMPTY_GROUP


def test_delete_needs_a_share_group_and_drops_the_topic_state() -> None:
    h = ShareHarness({"t": 2, "u": 1})
    offsets = h.groups.share_offsets
    with pytest.raises(GroupError) as unknown:
        offsets.delete(h.now, "g", ["t"])
    assert unknown.value.code == ErrorCode.GROUP_ID_NOT_FOUND
    offsets.alter(h.now, "g", {"t": {0: 1, 1: 2}, "u": {0: 3}})
    offsets.delete(h.now, "g", ["t"])
    assert offsets.describe_all("g", no_hw) == {"u": [DescribedOffset(0, 3, 0, -1)]}


def test_alter_on_another_kind_of_group_is_group_id_not_found() -> None:
    h = ShareHarness()
    h.share.other_kind = lambda group_id: group_id == "classic"
    with pytest.raises(GroupError) as refused:
        h.groups.share_offsets.alter(h.now, "classic", {"t": {0: 1}})
    assert refused.value.code == ErrorCode.GROUP_ID_NOT_FOUND


def test_offset_commit_on_a_share_group_is_group_id_not_found() -> None:
    h = ShareHarness()
    h.hb("m1", 0, ["t"])
    request = OffsetCommitRequest(
        group_id="g",
        topics=[OffsetCommitRequestTopic(name="t", partitions=[OffsetCommitRequestPartition(0, 1)])],
    )
    answered = h.groups.commit_offsets(h.now, request, api_version=9)
    assert [p.error_code for t in answered for p in t.partitions] == [ErrorCode.GROUP_ID_NOT_FOUND]
