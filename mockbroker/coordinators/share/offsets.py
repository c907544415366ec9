"""The share-group offset admin APIs, sans-I/O: DescribeShareGroupOffsets, AlterShareGroupOffsets
and DeleteShareGroupOffsets (KIP-932) over the share coordinator's groups and the share partitions'
start offsets.

Follows GroupCoordinatorService.describeShareGroupOffsets / alterShareGroupOffsets /
deleteShareGroupOffsets and GroupMetadataManager's checks behind them. In Kafka the start offsets
live with the share coordinator (ReadShareGroupStateSummary, WriteShareGroupState,
DeleteShareGroupState); here they are the ``SharePartitionManager``'s share partitions. A partition
the group never fetched has no state: Kafka's persister answers it with the uninitialized start
offset (-1), as here.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mockbroker.coordinators.consumer.base import TopicView
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.share.coordinator import ShareGroupCoordinator
from mockbroker.coordinators.share.group import ShareGroup
from mockbroker.coordinators.share.manager import SharePartitionManager
from mockbroker.coordinators.share.partition import RecordState, SharePartition
from mockbroker_protocol.errors import ErrorCode

UNINITIALIZED_START_OFFSET = -1  # PartitionFactory.UNINITIALIZED_START_OFFSET
DEFAULT_LEADER_EPOCH = 0  # PartitionFactory.DEFAULT_LEADER_EPOCH: the state is written at leader epoch 0 here
UNKNOWN_LAG = -1  # DescribeShareGroupOffsetsResponsePartition.Lag's default

HighWatermark = Callable[[str, int], "int | None"]  # (topic, partition) -> the log's high watermark


@dataclass(slots=True)
class DescribedOffset:
    """One partition of DescribeShareGroupOffsets: the SPSO and how many records are still to be
    delivered (the lag, KIP-1226: high watermark - SPSO - records past it already delivered)."""

    partition: int
    start_offset: int
    leader_epoch: int
    lag: int


class ShareGroupOffsets:
    """The admin side of share-group offsets. Describing takes ``high_watermark(topic, partition)``
    (the handler's view of the logs) for the lag's end."""

    def __init__(self, coordinator: ShareGroupCoordinator, manager: SharePartitionManager,
                 topics: Mapping[str, TopicView]) -> None:  # fmt: skip
        self.coordinator = coordinator
        self.manager = manager
        self.topics = topics

    def _group(self, group_id: str) -> ShareGroup:
        """GroupMetadataManager.shareGroup: GROUP_ID_NOT_FOUND for an unknown group or another kind."""
        group = self.coordinator.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        return group

    def _state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> SharePartition | None:
        return self.manager.partitions.get((group_id, topic_id, partition))

    # -- DescribeShareGroupOffsets ---------------------------------------------------------------------

    def describe(
        self, group_id: str, topic: str, partitions: list[int], high_watermark: HighWatermark
    ) -> list[DescribedOffset]:
        """The start offsets of the named partitions (of an existing topic). Kafka looks up no
        group here: what the share coordinator holds for the id is the answer."""
        topic_id = self.topics[topic].topic_id
        return [self._described(group_id, topic, topic_id, p, high_watermark) for p in partitions]

    def describe_all(self, group_id: str, high_watermark: HighWatermark) -> dict[str, list[DescribedOffset]]:
        """Topics null: every partition the group has state for, by topic name."""
        by_id = {t.topic_id: t.name for t in self.topics.values()}
        out: dict[str, list[DescribedOffset]] = {}
        for g, topic_id, p in sorted(self.manager.partitions, key=lambda k: (str(k[1]), k[2])):
            name = by_id.get(topic_id)
            if g == group_id and name is not None:
                out.setdefault(name, []).append(self._described(group_id, name, topic_id, p, high_watermark))
        return out

    def _described(
        self, group_id: str, topic: str, topic_id: uuid.UUID, partition: int, high_watermark: HighWatermark
    ) -> DescribedOffset:
        sp = self._state(group_id, topic_id, partition)
        if sp is None:
            return DescribedOffset(partition, UNINITIALIZED_START_OFFSET, DEFAULT_LEADER_EPOCH, UNKNOWN_LAG)
        hw = high_watermark(topic, partition)
        lag = UNKNOWN_LAG
        if hw is not None:
            done = sum(
                1 for o, r in sp.in_flight.items()
                if o >= sp.start_offset and r.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
            )  # fmt: skip
            lag = max(0, hw - sp.start_offset - done)
        return DescribedOffset(partition, sp.start_offset, DEFAULT_LEADER_EPOCH, lag)

    # -- AlterShareGroupOffsets ------------------------------------------------------------------------

    def alter(self, now_ms: int, group_id: str, offsets: dict[str, dict[int, int]]) -> None:
        """Sets the SPSO of each named partition (existing topics and partitions, checked by the
        caller): the group must have no members (NON_EMPTY_GROUP). The share partition starts
        over at the new offset, nothing in flight."""
        group = self.coordinator.groups.get(group_id)
        if group is not None and not group.is_empty():
            raise GroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        if group is None:
            group = self.coordinator.get_or_create_group(group_id, now_ms)
        for topic, partitions in offsets.items():
            topic_id = self.topics[topic].topic_id
            for partition, start in partitions.items():
                self.manager.partitions[(group_id, topic_id, partition)] = SharePartition(
                    group_id, topic, partition, start
                )
        self.coordinator.record("share_group.offsets_altered", group, now_ms,
                                offsets={t: dict(p) for t, p in offsets.items()})  # fmt: skip

    # -- DeleteShareGroupOffsets -----------------------------------------------------------------------

    def delete(self, now_ms: int, group_id: str, topics: list[str]) -> None:
        """Drops the share-partition state of the named (existing) topics: the group must exist and
        have no members."""
        group = self._group(group_id)
        if not group.is_empty():
            raise GroupError(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        ids = {self.topics[t].topic_id for t in topics}
        for key in [k for k in self.manager.partitions if k[0] == group_id and k[1] in ids]:
            del self.manager.partitions[key]
        self.coordinator.record("share_group.offsets_deleted", group, now_ms, topics=list(topics))
