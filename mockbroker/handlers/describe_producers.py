"""DescribeProducers (key 61), v0 (KIP-664): the active producers of partitions.

As ReplicaManager.activeProducerState: answered by the partition's leader
(NOT_LEADER_OR_FOLLOWER elsewhere; UNKNOWN_TOPIC_OR_PARTITION when it does not exist), from the
partition's producer state (mockbroker/log/producers.py): each producer id's epoch, last sequence,
last timestamp, and the first offset of its open transaction (-1 when none). The coordinator epoch
of the producer's last marker is not kept: always -1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    PartitionResponse,
    ProducerState,
    TopicRequest,
    TopicResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_PRODUCERS
VERSIONS = (0, 0)


async def handle(ctx: RequestContext, req: DescribeProducersRequest) -> DescribeProducersResponse:
    return DescribeProducersResponse(topics=[_topic(ctx, t) for t in req.topics])


def _topic(ctx: RequestContext, topic: TopicRequest) -> TopicResponse:
    return TopicResponse(topic.name, [_partition(ctx, topic.name, i) for i in topic.partition_indexes])


def _partition(ctx: RequestContext, topic: str, index: int) -> PartitionResponse:
    if not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, topic):  # KafkaApis: READ on the topic
        return PartitionResponse(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    partition = ctx.cluster.partition(topic, index)
    if partition is None:
        return PartitionResponse(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if partition.leader_id != ctx.broker.node_id:
        return PartitionResponse(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    log = partition.log
    producers = [
        ProducerState(
            producer_id=entry.producer_id,
            producer_epoch=entry.producer_epoch,
            last_sequence=entry.last_seq,
            last_timestamp=entry.last_timestamp,
            coordinator_epoch=entry.coordinator_epoch,
            current_txn_start_offset=log.open_txn_first_offset.get(entry.producer_id, -1),
        )
        for entry in sorted(log.producers.producers.values(), key=lambda e: e.producer_id)
    ]
    return PartitionResponse(index, ErrorCode.NONE, None, producers)
