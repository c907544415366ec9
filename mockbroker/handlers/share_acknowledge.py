"""ShareAcknowledge (key 79), v1-2: a share-group member acknowledges the records it holds (Accept,
Release, Reject; Renew from v2, KIP-1222) without fetching more (KIP-932).

As KafkaApis.handleShareAcknowledgeRequest: the share session's epoch first
(SharePartitionManager.acknowledgeSessionUpdate: 0 is INVALID_SHARE_SESSION_EPOCH, no session
SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH; -1 acknowledges and then closes
the session, releasing what the member still holds), then one error per partition
(INVALID_RECORD_STATE for a record the member does not hold, INVALID_REQUEST for a malformed batch,
UNKNOWN_TOPIC_ID, NOT_LEADER_OR_FOLLOWER with the current leader). AcquisitionLockTimeoutMs is v2's.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from mockbroker.coordinators.errors import GroupError
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers.share_fetch import RENEW_MIN_VERSION, acknowledge, unauthorized_topics
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.share_acknowledge import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareAcknowledgeTopicResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SHARE_ACKNOWLEDGE
VERSIONS = (1, 2)


async def handle(ctx: RequestContext, req: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse:
    # KafkaApis: READ on the share group, for the whole request
    if ctx.cluster.authorizer is not None and not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id or ""):
        return ShareAcknowledgeResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    manager = ctx.cluster.groups.share_partitions
    group_id, member_id = req.group_id or "", req.member_id or ""
    lock_ms = ctx.cluster.groups.services.group_config(group_id).share_record_lock_duration_ms
    try:
        manager.acknowledge_session_update(group_id, member_id, req.share_session_epoch)
    except GroupError as exc:  # Kafka answers these with no message (Errors.X.exception())
        return ShareAcknowledgeResponse(error_code=exc.code, acquisition_lock_timeout_ms=lock_ms)
    topics: dict[uuid.UUID, ShareAcknowledgeTopicResponse] = {}
    leaders: set[int] = set()
    denied = unauthorized_topics(ctx, [t.topic_id for t in req.topics])  # KafkaApis: READ on each topic
    for t in req.topics:
        for p in t.partitions:
            batches = [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in p.acknowledgement_batches]
            code, message = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if t.topic_id in denied else acknowledge(
                ctx, manager, group_id, member_id, (t.topic_id, p.partition_index), batches,
                renew=ctx.api_version >= RENEW_MIN_VERSION,
            )  # fmt: skip
            data = PartitionData(partition_index=p.partition_index, error_code=code, error_message=message)
            topic = ctx.cluster.topic_by_id(t.topic_id)
            if topic is not None and 0 <= p.partition_index < len(topic.partitions):
                # Kafka names the leader on every answered partition; its endpoint when not here.
                partition = topic.partitions[p.partition_index]
                data.current_leader = LeaderIdAndEpoch(partition.leader_id, partition.log.leader_epoch)
                if partition.leader_id != ctx.broker.node_id:
                    leaders.add(partition.leader_id)
            topics.setdefault(t.topic_id, ShareAcknowledgeTopicResponse(topic_id=t.topic_id)).partitions.append(data)
    if req.share_session_epoch == -1:
        manager.close_session(group_id, member_id, ctx.now_ms)
    nodes = [ctx.cluster.brokers[i] for i in sorted(leaders) if i in ctx.cluster.brokers]
    return ShareAcknowledgeResponse(
        acquisition_lock_timeout_ms=lock_ms,
        responses=list(topics.values()),
        node_endpoints=[NodeEndpoint(n.node_id, a[0], a[1], n.rack) for n in nodes if (a := n.address(ctx.listener)) is not None],
    )
