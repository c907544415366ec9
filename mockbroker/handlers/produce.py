"""Produce (key 0), v3-13 served, v0-13 advertised: append record batches to partition leaders.

v3: transactional_id; exactly one v2 batch per partition (ProduceRequest.validateRecords).
v5: log_start_offset. v7: zstd allowed (KIP-110). v8: record_errors and error_message (KIP-467).
v9: flexible. v10 (KIP-951): NOT_LEADER_OR_FOLLOWER answers carry current_leader and the
leaders' node_endpoints. v13 (KIP-516): topics by id (UNKNOWN_TOPIC_ID).

v0-2 are advertised but not served, exactly as Kafka 4 does: KIP-896 removed them (ProduceRequest
validVersions is 3-13), yet ApiVersions keeps advertising min 0
(ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION, KAFKA-18659) because librdkafka refuses to
produce compressed batches to a broker whose Produce minimum is above 0. A v0-2 request fails to
parse in Kafka's RequestContext (InvalidRequestException) and the connection is closed; dispatch
does the same for versions outside VERSIONS. (Old sarama configs that send v0-2 fail the same way
against Kafka 4.)

acks 1 and -1 behave alike (one in-sync replica holds the data once appended), except that -1
checks min.insync.replicas; any other value is INVALID_REQUIRED_ACKS. acks=0 gets no response at
all, and a failed acks=0 request closes the connection so the producer notices and refreshes its
metadata (KafkaApis.handleProduceRequest).

A transactional producer's first batch of a transaction on a partition is verified with the
transaction coordinator (KIP-890 part 1, mockbroker/handlers/_txn.py): a partition the producer
did not add to its transaction, or a fenced producer, is refused.

Records are checked as LogValidator checks them (mockbroker/log/replica_manager.py): CreateTime
timestamps against message.timestamp.{before,after}.max.ms (KIP-937), no LogAppendTime flag from a
producer, a key on every record of a compacted topic; each refused record has its RecordError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.clock import client_clock_ms
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._txn import verify_transactional_append
from mockbroker.log.replica_manager import AppendResult, append_records
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.produce import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from mockbroker_protocol.primitives import Buffer, Records
from mockbroker_protocol.records.batch import (
    ATTRIBUTES_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import Topic

API_KEY = ApiKey.PRODUCE
VERSIONS = (3, 13)
ADVERTISED_MIN = 0  # KAFKA-18659, see above
TOPIC_IDS_MIN_VERSION = 13
CURRENT_LEADER_MIN_VERSION = 10  # KIP-951
VALID_ACKS = (-1, 0, 1)


async def handle(ctx: RequestContext, req: ProduceRequest) -> ProduceResponse | None:
    uniform: ErrorCode | None = None
    if req.acks not in VALID_ACKS:
        uniform = ErrorCode.INVALID_REQUIRED_ACKS  # ReplicaManager.appendRecords
    elif req.transactional_id is None and _has_transactional_records(req):
        # KafkaApis: transactional batches need the transactional id they belong to.
        uniform = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif req.transactional_id is not None and not authorized(
        ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id
    ):
        uniform = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED  # KafkaApis.handleProduceRequest
    responses = [
        TopicProduceResponse(
            name=topic_data.name,
            topic_id=topic_data.topic_id,
            partition_responses=_produce_topic(ctx, req, topic_data, uniform),
        )
        for topic_data in req.topic_data
    ]
    errors = [p for t in responses for p in t.partition_responses if p.error_code != ErrorCode.NONE]
    if req.acks == 0:
        if errors:
            from mockbroker.dispatch.context import CloseConnection  # dispatch imports the handler table

            raise CloseConnection(f"acks=0 produce failed: {sorted({ErrorCode(p.error_code).name for p in errors})}")
        return None
    return ProduceResponse(responses=responses, node_endpoints=_node_endpoints(ctx, errors))


def _produce_topic(
    ctx: RequestContext, req: ProduceRequest, topic_data: TopicProduceData, uniform: ErrorCode | None
) -> list[PartitionProduceResponse]:
    cluster = ctx.cluster
    topic: Topic | None
    if ctx.api_version >= TOPIC_IDS_MIN_VERSION:
        topic, missing = cluster.topic_by_id(topic_data.topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    else:
        topic, missing = cluster.topics.get(topic_data.name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    out = []
    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    name = topic_data.name if topic is None else topic.name
    # WRITE on the topic, checked before it is known to exist (a topic id not known has no name to check)
    denied = (
        cluster.authorizer is not None
        and (topic is not None or ctx.api_version < TOPIC_IDS_MIN_VERSION)
        and not authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC, name)
    )
    for data in topic_data.partition_data:
        fault = None if faults is None else faults.partition(name, data.index)
        if fault is not None:
            result = AppendResult(fault)  # nothing appended
        elif denied:
            result = AppendResult(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        elif topic is None:
            result = AppendResult(missing)
        elif not 0 <= data.index < len(topic.partitions):
            result = AppendResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        elif uniform is not None:
            result = AppendResult(uniform)
        elif req.transactional_id is not None and (
            refused := verify_transactional_append(
                ctx, req.transactional_id, topic.name, topic.partitions[data.index], _buffer(data.records)
            )
        ):
            result = AppendResult(refused[0], error_message=refused[1])
        else:
            result = append_records(
                cluster,
                ctx.broker,
                topic,
                topic.partitions[data.index],
                _buffer(data.records),
                acks=req.acks,
                api_version=ctx.api_version,
                client_id=ctx.client_id,
                now_ms=ctx.now_ms,
                record_now_ms=client_clock_ms(cluster.clock, ctx.now_ms),
                may_keep_frame=not ctx.inspected,
            )
        out.append(_partition_response(ctx, topic, data, result))
    return out


def _partition_response(
    ctx: RequestContext, topic: Topic | None, data: PartitionProduceData, result: AppendResult
) -> PartitionProduceResponse:
    response = PartitionProduceResponse(
        index=data.index,
        error_code=result.error,
        base_offset=result.base_offset,
        log_append_time_ms=result.log_append_time_ms,
        log_start_offset=result.log_start_offset,
        error_message=result.error_message,
        record_errors=list(result.record_errors),
    )
    if (
        result.error == ErrorCode.NOT_LEADER_OR_FOLLOWER
        and ctx.api_version >= CURRENT_LEADER_MIN_VERSION
        and topic is not None
    ):
        partition = topic.partitions[data.index]
        response.current_leader = LeaderIdAndEpoch(partition.leader_id, partition.log.leader_epoch)
    return response


def _node_endpoints(ctx: RequestContext, errors: list[PartitionProduceResponse]) -> list[NodeEndpoint]:
    """KIP-951: the endpoints of the leaders named in current_leader, so the producer can
    redirect without a Metadata round trip."""
    leaders = sorted({p.current_leader.leader_id for p in errors if p.current_leader.leader_id >= 0})
    nodes = [ctx.cluster.brokers[i] for i in leaders if i in ctx.cluster.brokers]
    return [NodeEndpoint(n.node_id, a[0], a[1], n.rack) for n in nodes if (a := n.address(ctx.listener)) is not None]


def _buffer(records: Records | None) -> Buffer | None:
    # Decoded requests carry a memoryview of the frame; a list of chunks only comes from Python.
    if records is None or isinstance(records, bytes | bytearray | memoryview):
        return records
    return b"".join(records)


def _has_transactional_records(req: ProduceRequest) -> bool:
    """RequestUtils.hasTransactionalRecords: the first batch of any partition is transactional.
    Read from the raw attributes (the low byte of the int16); a batch too short to tell is left
    to the per-partition checks."""
    for topic_data in req.topic_data:
        for data in topic_data.partition_data:
            records = _buffer(data.records)
            if (
                records is not None
                and len(records) >= RECORD_BATCH_OVERHEAD
                and records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK
            ):
                return True
    return False
