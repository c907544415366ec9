"""The committed-offsets store: group -> topic -> partition -> OffsetAndMetadata, plus the pending
transactional offsets that RequireStable fetches report as UNSTABLE_OFFSET_COMMIT.

Pure data, like OffsetMetadataManager's ``Offsets`` maps; the rules (what is stored, when offsets
expire) live in ``mockbroker.coordinators.offsets.manager``, who may commit in each kind's coordinator.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

NO_METADATA = ""  # OffsetAndMetadata.NO_METADATA
NO_PARTITION_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH

TopicOffsets = dict[int, "OffsetAndMetadata"]
GroupOffsets = dict[str, TopicOffsets]


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    committed_offset: int
    leader_epoch: int | None  # None: "no epoch" (-1 on the wire)
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None  # OffsetCommit v2-4 with a RetentionTimeMs (or v1 timestamp)

    @property
    def leader_epoch_or_sentinel(self) -> int:
        return NO_PARTITION_LEADER_EPOCH if self.leader_epoch is None else self.leader_epoch


class OffsetStore:
    def __init__(self) -> None:
        self._offsets: dict[str, GroupOffsets] = {}
        # producer id -> that transaction's not-yet-committed offsets (TxnOffsetCommit, KIP-98)
        self._pending: dict[int, dict[str, GroupOffsets]] = {}
        self._open_transactions: dict[str, set[int]] = {}  # group -> producer ids

    def get(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self._offsets.get(group_id, {}).get(topic, {}).get(partition)

    def group_offsets(self, group_id: str) -> GroupOffsets:
        """A copy: topic -> partition -> offset, in commit order."""
        return {topic: dict(parts) for topic, parts in self._offsets.get(group_id, {}).items()}

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    def put(self, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None:
        self._offsets.setdefault(group_id, {}).setdefault(topic, {})[partition] = offset

    def remove(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        topics = self._offsets.get(group_id)
        if topics is None or topic not in topics:
            return None
        removed = topics[topic].pop(partition, None)
        if not topics[topic]:
            del topics[topic]
        if not topics:
            del self._offsets[group_id]
        return removed

    def items(self, group_id: str) -> Iterator[tuple[str, int, OffsetAndMetadata]]:
        for topic, partitions in list(self._offsets.get(group_id, {}).items()):
            for partition, offset in list(partitions.items()):
                yield topic, partition, offset

    # -- transactional offsets ------------------------------------------------------------------

    def put_pending(self, producer_id: int, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None:
        self._pending.setdefault(producer_id, {}).setdefault(group_id, {}).setdefault(topic, {})[partition] = offset
        self._open_transactions.setdefault(group_id, set()).add(producer_id)

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        return any(
            partition in self._pending.get(pid, {}).get(group_id, {}).get(topic, {})
            for pid in self._open_transactions.get(group_id, ())
        )

    def has_open_transactions(self, group_id: str) -> bool:
        return bool(self._open_transactions.get(group_id))

    def complete_transaction(self, producer_id: int, commit: bool) -> None:
        """EndTxn's marker reached the offsets partition: commit or drop that producer's offsets."""
        pending = self._pending.pop(producer_id, {})
        for group_id, topics in pending.items():
            if commit:
                for topic, partitions in topics.items():
                    for partition, offset in partitions.items():
                        self.put(group_id, topic, partition, offset)
            producers = self._open_transactions.get(group_id)
            if producers is not None:
                producers.discard(producer_id)
                if not producers:
                    del self._open_transactions[group_id]

    def remove_pending(self, group_id: str, topic: str, partition: int) -> bool:
        removed = False
        for pid in list(self._open_transactions.get(group_id, ())):
            topics = self._pending.get(pid, {}).get(group_id, {})
            if topic in topics and topics[topic].pop(partition, None) is not None:
                removed = True
        return removed

    def delete_group(self, group_id: str) -> int:
        """Every committed and pending offset of a group (DeleteGroups); returns how many."""
        count = sum(len(p) for p in self._offsets.pop(group_id, {}).values())
        for pid in self._open_transactions.pop(group_id, set()):
            topics = self._pending.get(pid, {}).pop(group_id, {})
            count += sum(len(p) for p in topics.values())
        return count

    def delete_partitions(self, topic: str, partitions: set[int] | None = None) -> list[tuple[str, int]]:
        """Offsets of deleted partitions (OffsetMetadataManager.onPartitionsDeleted): (group, partition)s removed."""
        removed: list[tuple[str, int]] = []
        for group_id in list(self._offsets):
            for partition in list(self._offsets[group_id].get(topic, {})):
                if partitions is None or partition in partitions:
                    self.remove(group_id, topic, partition)
                    removed.append((group_id, partition))
        for groups in self._pending.values():
            for topics in groups.values():
                if topic in topics:
                    for partition in list(topics[topic]):
                        if partitions is None or partition in partitions:
                            del topics[topic][partition]
        return removed

    def groups(self) -> list[str]:
        return list(self._offsets)
