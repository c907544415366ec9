"""DescribeShareGroupOffsets (key 90), v0-1: each share group's share-partition start offsets
(KIP-932), and from v1 their lag (KIP-1226).

As KafkaApis.handleDescribeShareGroupOffsetsRequest and GroupCoordinatorService.
describeShareGroupOffsets: each group is answered on its own, a group this broker does not
coordinate NOT_COORDINATOR. No group is looked up: an unknown id (even "") reads the share
coordinator's state like any other, which has none (checked against Kafka 4.3.1). Topics null describes every partition the group has state for; a named topic
that does not exist, like a partition without state, has start offset -1 and no error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.coordinators.share.offsets import (
    DEFAULT_LEADER_EPOCH,
    UNINITIALIZED_START_OFFSET,
    UNKNOWN_LAG,
    DescribedOffset,
)
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponseGroup,
    DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS
VERSIONS = (0, 1)

# Errors.<code>.message(), which Kafka puts in the answer where no exception gave one.
MESSAGES = {
    ErrorCode.INVALID_GROUP_ID: "The group id is invalid.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    ErrorCode.NON_EMPTY_GROUP: "The group is not empty.",
}


def error_message(code: ErrorCode) -> str:
    return MESSAGES[code]


def _partitions(offsets: list[DescribedOffset]) -> list[DescribeShareGroupOffsetsResponsePartition]:
    return [
        DescribeShareGroupOffsetsResponsePartition(
            partition_index=o.partition, start_offset=o.start_offset, leader_epoch=o.leader_epoch, lag=o.lag
        )
        for o in offsets
    ]


def describe(
    ctx: RequestContext, group: DescribeShareGroupOffsetsRequestGroup
) -> DescribeShareGroupOffsetsResponseGroup:
    cluster = ctx.cluster
    answer = DescribeShareGroupOffsetsResponseGroup(group_id=group.group_id)
    if group.group_id and not is_group_coordinator(ctx, group.group_id):
        answer.error_code, answer.error_message = (
            ErrorCode.NOT_COORDINATOR,
            error_message(ErrorCode.NOT_COORDINATOR),
        )
        return answer

    def high_watermark(topic: str, index: int) -> int | None:
        partition = cluster.partition(topic, index)
        return None if partition is None else partition.log.high_watermark

    offsets = cluster.groups.share_offsets
    if group.topics is None:
        for name, described in offsets.describe_all(group.group_id, high_watermark).items():
            answer.topics.append(DescribeShareGroupOffsetsResponseTopic(name, cluster.topics[name].topic_id, _partitions(described)))
        return answer
    for topic in group.topics:
        known = cluster.topics.get(topic.topic_name)
        if known is None:
            # No error: the share coordinator simply holds no state for it (Kafka 4.3.1).
            described = [DescribedOffset(p, UNINITIALIZED_START_OFFSET, DEFAULT_LEADER_EPOCH, UNKNOWN_LAG) for p in topic.partitions]
            answer.topics.append(DescribeShareGroupOffsetsResponseTopic(topic.topic_name, partitions=_partitions(described)))
            continue
        described = offsets.describe(group.group_id, topic.topic_name, list(topic.partitions), high_watermark)
        answer.topics.append(DescribeShareGroupOffsetsResponseTopic(topic.topic_name, known.topic_id, _partitions(described)))
    return answer


async def handle(
    ctx: RequestContext, req: DescribeShareGroupOffsetsRequest
) -> DescribeShareGroupOffsetsResponse:
    return DescribeShareGroupOffsetsResponse(groups=[describe(ctx, group) for group in req.groups])
