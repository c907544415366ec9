"""StreamsGroupHeartbeat (key 88), v0: a KIP-1071 streams-group member (a Kafka Streams client with
group.protocol=streams) joins with its topology, heartbeats, reconciles its tasks and leaves, the
broker validating the topology and computing every assignment.

As KafkaApis.handleStreamsGroupHeartbeatRequest and GroupCoordinatorService.streamsGroupHeartbeat:
the request checks (INVALID_REQUEST, STREAMS_INVALID_TOPOLOGY) come before NOT_COORDINATOR; the
rest is the coordinator's (mockbroker/coordinators/streams/coordinator.py). The internal topics the
heartbeat finds missing (repartition and changelog topics, status MISSING_INTERNAL_TOPICS) are then
created here, with the partitions and configs the topology asks for, as Kafka's
AutoTopicCreationManager does after the answer; the member's next heartbeat finds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers import _topic_admin as topic_admin
from mockbroker.handlers._authz import (
    AclOperation,
    ResourceType,
    authorized,
    cluster_authorized,
    topics_authorized,
)
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.streams_group_heartbeat import (
    Status,
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.STREAMS_GROUP_HEARTBEAT
VERSIONS = (0, 0)
MISSING_INTERNAL_TOPICS = 3  # StreamsGroupHeartbeatResponse.Status


async def handle(ctx: RequestContext, req: StreamsGroupHeartbeatRequest) -> StreamsGroupHeartbeatResponse:
    groups = ctx.cluster.groups
    # KafkaApis authorizes before the group coordinator checks the request: READ on the group, then
    # DESCRIBE on every topic of a topology (sources, repartition and changelog topics)
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return StreamsGroupHeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message="Group authorization failed.")
    if req.topology is not None and not topics_authorized(ctx, AclOperation.DESCRIBE, _topology_topics(req)):
        return StreamsGroupHeartbeatResponse(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    refused = groups.check_streams_group_heartbeat_request(req)
    if refused is not None:
        return refused
    if not is_group_coordinator(ctx, req.group_id):
        return StreamsGroupHeartbeatResponse(error_code=ErrorCode.NOT_COORDINATOR)
    result = groups.streams_group_heartbeat(
        ctx.now_ms,
        req,
        client_id=ctx.client_id,
        client_host=f"/{ctx.client_host}",  # InetAddress.toString(), as StreamsGroupDescribe shows it
    )
    creatable = [t for t in result.internal_topics_to_create if _may_create(ctx, t.name)]
    refused_names = [t.name for t in result.internal_topics_to_create if t not in creatable]
    if refused_names:
        _tell_unauthorized(result.response, refused_names)
    for topic in creatable:
        # A failure (a topic created meanwhile, a bad config) leaves the status for the next heartbeat.
        topic_admin.create_topic(
            ctx.cluster, topic.name, topic.partitions, topic.replication_factor, (), topic.configs, validate_only=False
        )
    return result.response


def _topology_topics(req: StreamsGroupHeartbeatRequest) -> list[str]:
    assert req.topology is not None
    names: list[str] = []
    for sub in req.topology.subtopologies:
        names += sub.source_topics + sub.repartition_sink_topics
        names += [t.name for t in sub.repartition_source_topics] + [t.name for t in sub.state_changelog_topics]
    return names


def _may_create(ctx: RequestContext, name: str) -> bool:
    """CREATE on the cluster or the topic (no denial logged for the cluster, as KafkaApis asks it)."""
    if ctx.cluster.authorizer is None or cluster_authorized(ctx, AclOperation.CREATE, log_denial=False):
        return True
    return authorized(ctx, AclOperation.CREATE, ResourceType.TOPIC, name)


def _tell_unauthorized(response: StreamsGroupHeartbeatResponse, names: list[str]) -> None:
    """KafkaApis does not create internal topics the member may not CREATE: it says so in the
    MISSING_INTERNAL_TOPICS status's detail (a new status if there is none)."""
    # ``names`` keep the order of the missing-topics HashMap, the Seq KafkaApis partitions by authorization
    note = f"Unauthorized to CREATE on topics {', '.join(names)}."
    statuses = response.status if response.status is not None else []
    missing = next((s for s in statuses if s.status_code == MISSING_INTERNAL_TOPICS), None)
    if missing is None:
        statuses.append(Status(status_code=MISSING_INTERNAL_TOPICS, status_detail=note))
    else:
        missing.status_detail = f"{missing.status_detail}; {note}"
    response.status = statuses
