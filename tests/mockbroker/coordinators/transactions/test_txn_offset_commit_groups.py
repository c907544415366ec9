"""TxnOffsetCommit's group checks (KIP-447) for both kinds of group: a consumer group (KIP-848)
checks the member and its epoch, a classic group the member and its generation; a commit naming
neither is not checked. Accepted offsets are pending until the transaction completes."""

from __future__ import annotations

from mockbroker_protocol.errors import ErrorCode
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness

OFFSETS = [("t", [(0, 5, -1, "")])]


def test_consumer_group_members_commit_at_their_epoch() -> None:
    h = ConsumerHarness()
    joined = h.cg_join("m1")
    epoch = joined.member_epoch
    groups = h.groups

    def commit(generation_id: int, member_id: str, instance: str | None = None) -> object:
        return groups.commit_transactional_offsets(
            h.now, "g", 7, OFFSETS, generation_id=generation_id, member_id=member_id, group_instance_id=instance
        )

    assert commit(epoch, "nobody") == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit(epoch + 1, "m1") == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(-1, "") == {("t", 0): ErrorCode.NONE}  # KIP-447: nothing named, nothing checked
    assert commit(epoch, "m1") == {("t", 0): ErrorCode.NONE}
    assert "g" not in {g for g in h.groups.classic.groups}  # no classic group was made on the side
    fetched = groups.fetch_offsets("g", [("t", [0])], require_stable=True)
    assert fetched.topics[0].partitions[0].error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT
    groups.complete_transaction(h.now, 7, True)
    assert groups.fetch_offsets("g", [("t", [0])]).topics[0].partitions[0].committed_offset == 5


def test_classic_group_members_commit_at_their_generation() -> None:
    h = ConsumerHarness()
    groups = h.groups
    assert groups.commit_transactional_offsets(h.now, "simple", 7, OFFSETS, generation_id=3, member_id="m") == (
        ErrorCode.ILLEGAL_GENERATION
    )
    assert groups.commit_transactional_offsets(h.now, "simple", 7, OFFSETS) == {("t", 0): ErrorCode.NONE}
    groups.complete_transaction(h.now, 7, False)
    assert groups.fetch_offsets("simple", [("t", [0])]).topics[0].partitions[0].committed_offset == -1
