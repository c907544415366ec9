"""ShareFetch (key 78), v1-2: a share-group member's records, each acquired by it alone under a lock,
with its acknowledgements of earlier ones piggy-backed (KIP-932).

v1 is the stable version (v0 was Kafka 4.0's early access). v2 (KIP-1222): ShareAcquireMode and
IsRenewAck; a renew-only request acquires nothing.

As KafkaApis.handleShareFetchRequest and SharePartitionManager: the share session first
(``new_context``: epoch 0 opens, -1 closes, others must be the session's next epoch), request
errors answered at the top level; then the piggy-backed acknowledgements, one result per
partition (AcknowledgeErrorCode); a final-epoch request ends there and closes the session,
releasing what the member still holds. Then each session partition: UNKNOWN_TOPIC_ID,
UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER (with the current leader and its endpoint), or
the records acquired for the member (``SharePartitionManager.acquire``, at most MaxRecords in all),
with the batches that hold them. With nothing acquired the request waits up to MaxWaitMs for an
append or for records made Available again (a release, an expired lock). A full answer (epoch 0)
lists every session partition; an incremental one only partitions with something to say.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from mockbroker.coordinators.errors import GroupError
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers.fetch import FetchWaiter
from mockbroker.log.replica_manager import partition_error
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.share_fetch import (
    AcquiredRecords,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
    ShareFetchableTopicResponse,
    ShareFetchRequest,
    ShareFetchResponse,
)
from mockbroker_protocol.primitives import Buffer

if TYPE_CHECKING:
    from mockbroker.coordinators.share.manager import SharePartitionManager, TopicIdPartition
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.log.partition import PartitionLog
    from mockbroker.model import Partition, Topic
    from mockbroker.state import ClusterState

API_KEY = ApiKey.SHARE_FETCH
VERSIONS = (1, 2)
RENEW_MIN_VERSION = 2

Acks = dict["TopicIdPartition", list[tuple[int, int, list[int]]]]


async def handle(ctx: RequestContext, req: ShareFetchRequest) -> ShareFetchResponse:
    # KafkaApis: READ on the share group, for the whole request
    if ctx.cluster.authorizer is not None and not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id or ""):
        return ShareFetchResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    manager = ctx.cluster.groups.share_partitions
    group_id, member_id = req.group_id or "", req.member_id or ""
    wanted = [(t.topic_id, p.partition_index) for t in req.topics for p in t.partitions]
    forgotten = [(t.topic_id, p) for t in req.forgotten_topics_data for p in t.partitions]
    acks: Acks = {
        (t.topic_id, p.partition_index): [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches]
        for t in req.topics for p in t.partitions if p.acknowledgement_batches
    }  # fmt: skip
    lock_ms = ctx.cluster.groups.services.group_config(group_id).share_record_lock_duration_ms
    try:
        context = manager.new_context(
            group_id, member_id, req.share_session_epoch, [] if req.share_session_epoch == -1 else wanted, forgotten,
            acknowledging=bool(acks), now_ms=ctx.now_ms,
        )  # fmt: skip
    except GroupError as exc:  # Kafka answers these with no message (Errors.X.exception())
        return ShareFetchResponse(error_code=exc.code)
    answers: dict[TopicIdPartition, PartitionData] = {}
    denied = unauthorized_topics(ctx, [t.topic_id for t in req.topics])
    for tp in wanted:
        if tp[0] in denied:  # KafkaApis: READ on each topic, else TOPIC_AUTHORIZATION_FAILED for its partitions
            answers[tp] = PartitionData(
                partition_index=tp[1], error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, current_leader=_leader(ctx, tp), records=b""
            )
    for tp, batches in acks.items():
        data = answers.setdefault(tp, PartitionData(partition_index=tp[1], current_leader=_leader(ctx, tp), records=b""))
        if tp[0] in denied:
            data.acknowledge_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            continue
        code, message = acknowledge(ctx, manager, group_id, member_id, tp, batches, renew=ctx.api_version >= RENEW_MIN_VERSION)
        data.acknowledge_error_code, data.acknowledge_error_message = code, message
    if context.is_final:
        manager.close_session(group_id, member_id, ctx.now_ms)
        return _response(ctx, answers, lock_ms)
    if not req.is_renew_ack:
        partitions = [tp for tp in context.partitions if tp[0] not in denied]
        fetched = await _acquire_until_ready(ctx, manager, req, group_id, member_id, partitions)
        for tp, data in fetched.items():
            if tp in answers:
                data.acknowledge_error_code = answers[tp].acknowledge_error_code
                data.acknowledge_error_message = answers[tp].acknowledge_error_message
            if context.is_full or tp in answers or data.error_code or data.acquired_records:
                answers[tp] = data
    if context.is_full:
        for tp in context.partitions:
            answers.setdefault(tp, PartitionData(partition_index=tp[1], current_leader=_leader(ctx, tp), records=b""))
    return _response(ctx, answers, lock_ms)


def unauthorized_topics(ctx: RequestContext, topic_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """The known topics (by id) the principal may not READ (an unknown id stays UNKNOWN_TOPIC_ID)."""
    if ctx.cluster.authorizer is None:
        return set()
    denied: set[uuid.UUID] = set()
    for topic_id in dict.fromkeys(topic_ids):
        topic = ctx.cluster.topic_by_id(topic_id)
        if topic is not None and not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, topic.name):
            denied.add(topic_id)
    return denied


def locate(ctx: RequestContext, tp: TopicIdPartition) -> tuple[Topic | None, Partition | None, PartitionData | None]:
    """The topic and partition led here, or the error answer (with the leader for NOT_LEADER)."""
    topic_id, index = tp
    topic = ctx.cluster.topic_by_id(topic_id)
    if topic is None:
        return None, None, PartitionData(partition_index=index, error_code=ErrorCode.UNKNOWN_TOPIC_ID, records=b"")
    if not 0 <= index < len(topic.partitions):
        return topic, None, PartitionData(partition_index=index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, records=b"")
    partition = topic.partitions[index]
    error = partition_error(ctx.broker, partition, -1)
    if error != ErrorCode.NONE:
        data = PartitionData(partition_index=index, error_code=error, records=b"")
        data.current_leader = LeaderIdAndEpoch(partition.leader_id, partition.log.leader_epoch)
        return topic, partition, data
    return topic, partition, None


def _leader(ctx: RequestContext, tp: TopicIdPartition) -> LeaderIdAndEpoch:
    """The partition's leader and epoch, (-1, -1) for an unknown one."""
    topic = ctx.cluster.topic_by_id(tp[0])
    if topic is None or not 0 <= tp[1] < len(topic.partitions):
        return LeaderIdAndEpoch()
    partition = topic.partitions[tp[1]]
    return LeaderIdAndEpoch(partition.leader_id, partition.log.leader_epoch)


def acknowledge(
    ctx: RequestContext, manager: SharePartitionManager, group_id: str, member_id: str, tp: TopicIdPartition,
    batches: list[tuple[int, int, list[int]]], *, renew: bool,
) -> tuple[int, str | None]:  # fmt: skip
    """One partition's acknowledgements: (error code, message)."""
    topic, partition, failed = locate(ctx, tp)
    if failed is not None or topic is None or partition is None:
        return (failed.error_code if failed is not None else ErrorCode.UNKNOWN_TOPIC_ID), None
    try:
        manager.acknowledge(group_id, member_id, tp[0], topic.name, partition.log, batches, ctx.now_ms, renew_allowed=renew)
    except GroupError as exc:
        return exc.code, exc.message or None  # "": Kafka gives no message
    return ErrorCode.NONE, None


async def _acquire_until_ready(
    ctx: RequestContext, manager: SharePartitionManager, req: ShareFetchRequest, group_id: str, member_id: str,
    partitions: list[TopicIdPartition],
) -> dict[TopicIdPartition, PartitionData]:  # fmt: skip
    cluster = ctx.cluster
    deadline_ms = ctx.now_ms + req.max_wait_ms
    waiter: _Waiter | None = None
    try:
        while True:
            now_ms = cluster.clock.now_ms()
            results, acquired, logs = _acquire_all(ctx, manager, req, group_id, member_id, partitions, now_ms)
            failed = any(d.error_code for d in results.values())
            if acquired or failed or req.max_wait_ms <= 0 or not logs or (waiter is not None and waiter.expired) \
                    or now_ms >= deadline_ms:  # fmt: skip
                return results
            if waiter is None:
                waiter = _Waiter(cluster, manager, logs, deadline_ms)
            await waiter.wait()
    finally:
        if waiter is not None:
            waiter.close()


def _acquire_all(
    ctx: RequestContext, manager: SharePartitionManager, req: ShareFetchRequest, group_id: str, member_id: str,
    partitions: list[TopicIdPartition], now_ms: int,
) -> tuple[dict[TopicIdPartition, PartitionData], int, list[PartitionLog]]:  # fmt: skip
    results: dict[TopicIdPartition, PartitionData] = {}
    left = req.max_records if req.max_records > 0 else (1 << 31) - 1
    logs: list[PartitionLog] = []
    acquired = 0
    for tp in partitions:
        topic, partition, failed = locate(ctx, tp)
        if failed is not None or topic is None or partition is None:
            results[tp] = failed if failed is not None else PartitionData(partition_index=tp[1], records=b"")
            continue
        log = partition.log
        logs.append(log)
        ranges = manager.acquire(group_id, member_id, tp[0], topic.name, log, left, now_ms) if left > 0 else []
        count = sum(r.last_offset - r.first_offset + 1 for r in ranges)
        left -= count
        acquired += count
        results[tp] = PartitionData(
            partition_index=tp[1],
            # Kafka names the leader on every answered partition, not only on NOT_LEADER_OR_FOLLOWER.
            current_leader=LeaderIdAndEpoch(partition.leader_id, log.leader_epoch),
            records=_batches_for(log, [(r.first_offset, r.last_offset) for r in ranges]),
            acquired_records=[AcquiredRecords(r.first_offset, r.last_offset, r.delivery_count) for r in ranges],
        )
    return results, acquired, logs


def _batches_for(log: PartitionLog, ranges: list[tuple[int, int]]) -> list[Buffer] | bytes:
    """The stored batches holding the acquired offsets, each once, in order (never copied)."""
    out: list[Buffer] = []
    seen: set[int] = set()
    for b in log.batches:
        if b.is_control:
            continue
        if any(b.base_offset <= last and first <= b.last_offset for first, last in ranges) and id(b) not in seen:
            seen.add(id(b))
            out.append(b.data)
    return out if out else b""


class _Waiter(FetchWaiter):
    """Wakes a parked ShareFetch on an append to one of its partitions, on records made Available
    again in any share partition, or at its deadline."""

    def __init__(self, cluster: ClusterState, manager: SharePartitionManager, logs: list[PartitionLog], deadline_ms: int) -> None:
        super().__init__(cluster, logs, deadline_ms, "share-fetch")
        self._manager = manager
        manager.add_waiter(self._event.set)

    def close(self) -> None:
        super().close()
        self._manager.remove_waiter(self._event.set)


def _response(ctx: RequestContext, answers: dict[TopicIdPartition, PartitionData], lock_ms: int) -> ShareFetchResponse:
    topics: dict[uuid.UUID, ShareFetchableTopicResponse] = {}
    for (topic_id, _), data in answers.items():
        topics.setdefault(topic_id, ShareFetchableTopicResponse(topic_id=topic_id)).partitions.append(data)
    # Endpoints only of leaders elsewhere (a partition answered NOT_LEADER_OR_FOLLOWER), as Kafka.
    leaders = sorted({
        d.current_leader.leader_id for d in answers.values()
        if d.current_leader.leader_id >= 0 and d.current_leader.leader_id != ctx.broker.node_id
    })  # fmt: skip
    nodes = [ctx.cluster.brokers[i] for i in leaders if i in ctx.cluster.brokers]
    return ShareFetchResponse(
        acquisition_lock_timeout_ms=lock_ms,
        responses=list(topics.values()),
        node_endpoints=[NodeEndpoint(n.node_id, a[0], a[1], n.rack) for n in nodes if (a := n.address(ctx.listener)) is not None],
    )
