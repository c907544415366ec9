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
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.streams_group_heartbeat import (
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.STREAMS_GROUP_HEARTBEAT
VERSIONS = (0, 0)


async def handle(ctx: RequestContext, req: StreamsGroupHeartbeatRequest) -> StreamsGroupHeartbeatResponse:
    groups = ctx.cluster.groups
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
    for topic in result.internal_topics_to_create:
        # A failure (a topic created meanwhile, a bad config) leaves the status for the next heartbeat.
        topic_admin.create_topic(
            ctx.cluster, topic.name, topic.partitions, topic.replication_factor, (), topic.configs, validate_only=False
        )
    return result.response
