"""Kafka's OffsetMetadataManager, sans-I/O: storing validated commits, OffsetFetch, OffsetDelete,
transactional commits, and offset expiry (kafka-group-semantics §8.1-§8.4).

Each kind of group validates a commit against its own members (ClassicGroup.validateOffsetCommit,
ConsumerGroup.validateOffsetCommit: classic/coordinator.py and consumer/coordinator.py); what is
common to every kind (the store, per-partition checks, the answer's shape, the events, expiry)
is here. A group is read through ``OffsetGroup``, which both kinds' groups satisfy.

There is no __consumer_offsets log: a commit is stored as soon as it is validated, so Kafka's
"append then complete" steps happen at once and its write errors never occur.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.offsets.store import NO_METADATA, OffsetAndMetadata, OffsetStore
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestTopic,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from mockbroker_protocol.messages.offset_delete import (
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)

DEFAULT_RETENTION_TIME = -1  # OffsetCommitRequest.DEFAULT_RETENTION_TIME
DEFAULT_TIMESTAMP = -1  # OffsetCommitRequest.DEFAULT_TIMESTAMP (v1 commit timestamp)
INVALID_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET

# (name, [(partition, offset, leader_epoch, metadata)]): a TxnOffsetCommit's partitions.
TransactionalTopics = list[tuple[str, list[tuple[int, int, int, str | None]]]]


class OffsetGroup(Protocol):
    """What offsets need of a group, of any kind (ClassicGroup, ConsumerGroup)."""

    @property
    def group_id(self) -> str: ...

    @property
    def generation_id(self) -> int: ...

    @property
    def state_timestamp_ms(self) -> int: ...

    def is_subscribed_to_topic(self, topic: str) -> bool: ...

    def offset_expiration_base(self) -> str | None: ...


def java_length(text: str) -> int:
    """String.length(): UTF-16 code units (offset.metadata.max.bytes counts these, §8.1)."""
    return len(text.encode("utf-16-le")) // 2


def partition_list(topics: list[OffsetCommitRequestTopic]) -> list[str]:
    """For events: every partition of a commit as "topic-partition"."""
    return [f"{t.name}-{p.partition_index}" for t in topics for p in t.partitions]


def rejected_commit(request: OffsetCommitRequest, error: ErrorCode) -> list[OffsetCommitResponseTopic]:
    """A group-level error answered on every partition of the commit."""
    return [
        OffsetCommitResponseTopic(t.name, t.topic_id, [OffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions])
        for t in request.topics
    ]


class OffsetMetadataManager:
    """The committed offsets of every group of the cluster, and the rules common to every kind."""

    def __init__(self, services: CoordinatorServices) -> None:
        self.services = services
        self.store = OffsetStore()

    @property
    def config(self) -> GroupConfig:
        return self.services.config

    def _record(self, type: str, group: OffsetGroup | str, now_ms: int, **details: Any) -> None:
        if isinstance(group, str):
            self.services.record(type, group, None, now_ms, **details)
        else:
            self.services.record(type, group.group_id, group.generation_id, now_ms, **details)

    # -- OffsetCommit (§8.1) ------------------------------------------------------------------------

    def is_metadata_too_large(self, metadata: str | None) -> bool:
        return metadata is not None and java_length(metadata) > self.config.offset_metadata_max_bytes

    def record_rejected_commit(
        self, group: OffsetGroup | str, now_ms: int, member_id: str, error: ErrorCode, generation: int,
        partitions: list[str], reason: str | None = None,
    ) -> None:  # fmt: skip
        """The ``offset.commit_rejected`` event of a commit refused by its group."""
        self._record(
            "offset.commit_rejected", group, now_ms, member_id=member_id or None, reason=reason or error.name,
            error=error.name, request_generation_id=generation, partitions=partitions,
        )  # fmt: skip

    def store_offsets(
        self,
        now_ms: int,
        group: OffsetGroup,
        request: OffsetCommitRequest,
        partition_errors: Mapping[tuple[str, int], ErrorCode],
        *,
        reason: str,
        request_generation_id: int,
    ) -> list[OffsetCommitResponseTopic]:
        """Store a validated commit, partition by partition (OFFSET_METADATA_TOO_LARGE for one
        partition only, §8.1); ``partition_errors`` are answered as given and not stored."""
        retention = request.retention_time_ms
        expire_timestamp_ms = None if retention == DEFAULT_RETENTION_TIME else now_ms + retention
        answered: list[OffsetCommitResponseTopic] = []
        committed: dict[str, dict[str, int]] = {}
        too_large: list[str] = []
        for topic in request.topics:
            partitions: list[OffsetCommitResponsePartition] = []
            for p in topic.partitions:
                error = partition_errors.get((topic.name, p.partition_index))
                if error is None and self.is_metadata_too_large(p.committed_metadata):
                    error = ErrorCode.OFFSET_METADATA_TOO_LARGE
                    too_large.append(f"{topic.name}-{p.partition_index}")
                if error is None:
                    self.store.put(
                        group.group_id,
                        topic.name,
                        p.partition_index,
                        OffsetAndMetadata(
                            committed_offset=p.committed_offset,
                            leader_epoch=None if p.committed_leader_epoch == -1 else p.committed_leader_epoch,
                            metadata=NO_METADATA if p.committed_metadata is None else p.committed_metadata,
                            commit_timestamp_ms=now_ms if p.commit_timestamp == DEFAULT_TIMESTAMP else p.commit_timestamp,
                            expire_timestamp_ms=expire_timestamp_ms,
                        ),
                    )
                    committed.setdefault(topic.name, {})[str(p.partition_index)] = p.committed_offset
                partitions.append(OffsetCommitResponsePartition(p.partition_index, error or ErrorCode.NONE))
            answered.append(OffsetCommitResponseTopic(topic.name, topic.topic_id, partitions))
        self._record(
            "offset.committed", group, now_ms, member_id=request.member_id or None, reason=reason,
            request_generation_id=request_generation_id, offsets=committed, metadata_too_large=too_large,
            expire_timestamp_ms=expire_timestamp_ms,
        )  # fmt: skip
        return answered

    # -- TxnOffsetCommit -------------------------------------------------------------------------------

    def store_pending_offsets(
        self, now_ms: int, group_id: str, producer_id: int, topics: TransactionalTopics
    ) -> dict[tuple[str, int], ErrorCode]:
        """OffsetMetadataManager.commitTransactionalOffset once the group accepted it: each
        partition pending until ``complete_transaction``, or its own error."""
        results: dict[tuple[str, int], ErrorCode] = {}
        for topic, partitions in topics:
            for partition, offset, epoch, metadata in partitions:
                if self.is_metadata_too_large(metadata):
                    results[(topic, partition)] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                    continue
                self.store.put_pending(
                    producer_id, group_id, topic, partition,
                    OffsetAndMetadata(offset, None if epoch == -1 else epoch, metadata or NO_METADATA, now_ms),
                )  # fmt: skip
                results[(topic, partition)] = ErrorCode.NONE
        return results

    def complete_transaction(self, now_ms: int, producer_id: int, commit: bool) -> None:
        """The transaction marker for ``producer_id`` reached the offsets partitions."""
        self.store.complete_transaction(producer_id, commit)

    # -- OffsetFetch (§8.3) -------------------------------------------------------------------------

    def fetch_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None, *, known: bool, require_stable: bool
    ) -> OffsetFetchResponseGroup:
        """OffsetMetadataManager.fetchOffsets / fetchAllOffsets (``topics`` None: every committed
        partition). A group that is not ``known`` (unknown or Dead) answers -1 everywhere, with
        no error."""
        answered: list[OffsetFetchResponseTopics] = []
        if topics is None:
            if known:
                for topic, offsets in self.store.group_offsets(group_id).items():
                    fetched = [self._fetched(group_id, topic, p, o, require_stable) for p, o in offsets.items()]
                    answered.append(OffsetFetchResponseTopics(name=topic, partitions=fetched))
            return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)
        for topic, partition_indexes in topics:
            fetched = [
                self._fetched(group_id, topic, p, self.store.get(group_id, topic, p) if known else None, require_stable)
                for p in partition_indexes
            ]
            answered.append(OffsetFetchResponseTopics(name=topic, partitions=fetched))
        return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)

    def _fetched(
        self, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata | None, require_stable: bool
    ) -> OffsetFetchResponsePartitions:
        if require_stable and self.store.has_pending(group_id, topic, partition):
            return OffsetFetchResponsePartitions(partition, INVALID_OFFSET, -1, NO_METADATA, ErrorCode.UNSTABLE_OFFSET_COMMIT)
        if offset is None:
            return OffsetFetchResponsePartitions(partition, INVALID_OFFSET, -1, NO_METADATA, ErrorCode.NONE)
        return OffsetFetchResponsePartitions(
            partition, offset.committed_offset, offset.leader_epoch_or_sentinel, offset.metadata, ErrorCode.NONE
        )

    # -- OffsetDelete (§8.4) ------------------------------------------------------------------------

    def delete_offsets(
        self, now_ms: int, group: OffsetGroup, topics: list[tuple[str, list[int]]]
    ) -> list[OffsetDeleteResponseTopic]:
        """OffsetMetadataManager.deleteOffsets once the group allowed it: a topic the group
        subscribes to is refused (GROUP_SUBSCRIBED_TO_TOPIC), any other partition's offsets go."""
        answered: list[OffsetDeleteResponseTopic] = []
        deleted: list[str] = []
        for topic, partitions in topics:
            if group.is_subscribed_to_topic(topic):
                errors = [OffsetDeleteResponsePartition(p, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for p in partitions]
            else:
                errors = []
                for p in partitions:
                    removed = self.store.remove(group.group_id, topic, p) is not None
                    if self.store.remove_pending(group.group_id, topic, p) or removed:
                        deleted.append(f"{topic}-{p}")
                    errors.append(OffsetDeleteResponsePartition(p, ErrorCode.NONE))
            answered.append(OffsetDeleteResponseTopic(topic, errors))
        if deleted:
            self._record("offset.deleted", group, now_ms, reason="OffsetDelete", partitions=deleted)
        return answered

    def delete_group(self, group_id: str) -> int:
        """DeleteGroups: every committed and pending offset of the group goes; how many."""
        return self.store.delete_group(group_id)

    # -- expiry (§8.2) ------------------------------------------------------------------------------

    def cleanup_expired_offsets(self, group: OffsetGroup, now_ms: int) -> bool:
        """OffsetMetadataManager.cleanupExpiredOffsets: True when the group has no offsets left."""
        group_id = group.group_id
        if not self.store.has_offsets(group_id):
            return True
        base = group.offset_expiration_base()
        if base is None:
            return False
        all_expired = True
        expired: list[str] = []
        for topic, partition, offset in self.store.items(group_id):
            if group.is_subscribed_to_topic(topic):
                all_expired = False  # never while the group still subscribes to the topic
                continue
            if self._is_expired(group, base, offset, now_ms) and not self.store.has_pending(group_id, topic, partition):
                self.store.remove(group_id, topic, partition)
                expired.append(f"{topic}-{partition}")
            else:
                all_expired = False
        if expired:
            self._record(
                "offset.expired", group, now_ms, partitions=expired,
                reason=f"offsets.retention.minutes ({self.config.offsets_retention_minutes}) passed since "
                + ("the group became Empty" if base == "state" else "the commit"),
            )  # fmt: skip
        return all_expired and not self.store.has_open_transactions(group_id)

    def _is_expired(self, group: OffsetGroup, base: str, offset: OffsetAndMetadata, now_ms: int) -> bool:
        """An explicit retention (v2-v4) expires at its time; otherwise offsets.retention.ms
        after the group became Empty (``base`` "state") or after the commit."""
        if offset.expire_timestamp_ms is not None:
            return now_ms >= offset.expire_timestamp_ms
        since = group.state_timestamp_ms if base == "state" else offset.commit_timestamp_ms
        return now_ms - since >= self.config.offsets_retention_ms

    def on_partitions_deleted(self, topic: str, now_ms: int, find_group: Callable[[str], OffsetGroup | None]) -> None:
        """OffsetMetadataManager.onPartitionsDeleted: a deleted topic's offsets go with it."""
        by_group: dict[str, list[str]] = {}
        for group_id, partition in self.store.delete_partitions(topic):
            by_group.setdefault(group_id, []).append(f"{topic}-{partition}")
        for group_id, partitions in by_group.items():
            self._record("offset.deleted", find_group(group_id) or group_id, now_ms, reason="topic deleted", partitions=partitions)
