"""OffsetCommit (key 8), v1-10 (Kafka 4 serves 2-10): commit a group's consumed offsets.

v1: a per-partition commit timestamp (removed in Kafka 4.0; served for sarama, whose offset
manager sends it; advertised from 2 as Kafka 4 does). v2-4: RetentionTimeMs (-1: the broker's
retention). v5: no retention. v6: CommittedLeaderEpoch. v7 (KIP-345): GroupInstanceId. v8: flexible.
v9 (KIP-848): GROUP_ID_NOT_FOUND for an unknown group with a generation (ILLEGAL_GENERATION below).
v10: topic ids instead of names (an unknown id: UNKNOWN_TOPIC_ID).
A KIP-848 consumer group validates GenerationIdOrMemberEpoch as the member epoch (§8.1): an unknown
member is UNKNOWN_MEMBER_ID, a newer epoch STALE_MEMBER_EPOCH, an older one is checked partition by
partition, and its members must commit with v9+ (UNSUPPORTED_VERSION below).

As KafkaApis.handleOffsetCommitRequest (kafka-group-semantics §8.1): broker-level checks first, per
partition (unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION); when nothing is left the
answer goes out without asking the coordinator, so not even NOT_COORDINATOR appears. Otherwise the
coordinator's group-level error (NOT_COORDINATOR included) lands on every remaining partition.
Only a null group id is INVALID_GROUP_ID, which the codec cannot carry: "" is a group like any other.
Answers are merged as OffsetCommitResponse.Builder does: broker-level errors first, then the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext, RequestFaults

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (1, 10)
ADVERTISED_MIN = 2  # Kafka 4's minimum; v1 is served for sarama, which never negotiates
TOPIC_ID_MIN_VERSION = 10


class _Builder:
    """OffsetCommitResponse.Builder: topics in first-seen order, partitions appended."""

    def __init__(self) -> None:
        self.topics: dict[str, OffsetCommitResponseTopic] = {}

    def add(self, topic: OffsetCommitRequestTopic, partitions: list[OffsetCommitResponsePartition]) -> None:
        key = f"{topic.topic_id}" if not topic.name else topic.name
        existing = self.topics.get(key)
        if existing is None:
            self.topics[key] = OffsetCommitResponseTopic(topic.name, topic.topic_id, list(partitions))
        else:
            existing.partitions.extend(partitions)


def _take_faults(
    ctx: RequestContext, faults: RequestFaults, builder: _Builder, topic: OffsetCommitRequestTopic
) -> OffsetCommitRequestTopic | None:
    """The fault point: partitions with a pushed error are answered with it and left out of the
    commit; the rest of the topic (None when nothing is left) goes on."""
    name = topic.name
    if ctx.api_version >= TOPIC_ID_MIN_VERSION:
        known = ctx.cluster.topic_by_id(topic.topic_id)
        name = "" if known is None else known.name
    kept, failed = [], []
    for p in topic.partitions:
        fault = faults.partition(name, p.partition_index)
        if fault is None:
            kept.append(p)
        else:
            failed.append(OffsetCommitResponsePartition(p.partition_index, fault))
    if failed:
        builder.add(topic, failed)
    return OffsetCommitRequestTopic(topic.name, topic.topic_id, kept) if kept else None


def _refused(req: OffsetCommitRequest, error: int) -> OffsetCommitResponse:
    """OffsetCommitRequest.getErrorResponse: every partition asked, the one error."""
    return OffsetCommitResponse(
        topics=[
            OffsetCommitResponseTopic(t.name, t.topic_id, [OffsetCommitResponsePartition(p.partition_index, error) for p in t.partitions])
            for t in req.topics
        ]
    )


async def handle(ctx: RequestContext, req: OffsetCommitRequest) -> OffsetCommitResponse:
    cluster = ctx.cluster
    builder = _Builder()
    valid: list[OffsetCommitRequestTopic] = []
    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):  # KafkaApis: the whole request
        return _refused(req, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    for asked in req.topics:
        topic = asked if faults is None else _take_faults(ctx, faults, builder, asked)
        if topic is None:
            continue
        if ctx.api_version >= TOPIC_ID_MIN_VERSION:
            known = cluster.topic_by_id(topic.topic_id)
            if known is None:
                builder.add(topic, [OffsetCommitResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_ID) for p in topic.partitions])
                continue
            topic = OffsetCommitRequestTopic(known.name, topic.topic_id, topic.partitions)
        if not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, topic.name):  # before existence, as Kafka
            builder.add(topic, [OffsetCommitResponsePartition(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic.partitions])
            continue
        if topic.name not in cluster.topics:
            builder.add(topic, [OffsetCommitResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for p in topic.partitions])
            continue
        good = [p for p in topic.partitions if cluster.partition(topic.name, p.partition_index) is not None]
        bad = [p for p in topic.partitions if cluster.partition(topic.name, p.partition_index) is None]
        if bad:
            builder.add(topic, [OffsetCommitResponsePartition(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for p in bad])
        if good:
            valid.append(OffsetCommitRequestTopic(topic.name, topic.topic_id, good))

    if valid:
        if not is_group_coordinator(ctx, req.group_id):
            answered = [
                OffsetCommitResponseTopic(t.name, t.topic_id, [OffsetCommitResponsePartition(p.partition_index, ErrorCode.NOT_COORDINATOR) for p in t.partitions])
                for t in valid
            ]
        else:
            filtered = OffsetCommitRequest(
                group_id=req.group_id,
                generation_id_or_member_epoch=req.generation_id_or_member_epoch,
                member_id=req.member_id,
                group_instance_id=req.group_instance_id,
                retention_time_ms=req.retention_time_ms,
                topics=valid,
            )
            answered = cluster.groups.commit_offsets(ctx.now_ms, filtered, api_version=ctx.api_version)
        for t in answered:
            builder.add(OffsetCommitRequestTopic(t.name, t.topic_id), t.partitions)
    return OffsetCommitResponse(topics=list(builder.topics.values()))
