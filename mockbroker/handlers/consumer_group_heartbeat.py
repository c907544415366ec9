"""ConsumerGroupHeartbeat (key 68), v0-1: a KIP-848 consumer-group member joins, heartbeats,
reconciles and leaves, the broker computing every assignment.

v0 (KIP-848): flexible; an empty MemberId on join gets a coordinator-generated one.
v1 (KIP-1082, KIP-848 regexes): SubscribedTopicRegex; the client must generate its MemberId.

As GroupCoordinatorService.consumerGroupHeartbeat (kafka-group-semantics §10.1): the request checks
(INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION) come before NOT_COORDINATOR;
the rest is the coordinator's (mockbroker/coordinators/consumer/heartbeat.py). Kafka 3.9 serves v0 only
(the 3.9 profile caps it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import (
    AclOperation,
    ResourceType,
    authorized,
    describable_topics,
    topics_authorized,
)
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.CONSUMER_GROUP_HEARTBEAT
VERSIONS = (0, 1)


async def handle(ctx: RequestContext, req: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    groups = ctx.cluster.groups
    # KafkaApis authorizes before the group coordinator checks the request: READ on the group,
    # then DESCRIBE on every subscribed topic (clients may not learn of topics they cannot describe)
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message="Group authorization failed.")
    if not topics_authorized(ctx, AclOperation.DESCRIBE, req.subscribed_topic_names):
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    refused = groups.check_consumer_group_heartbeat_request(req, ctx.api_version)
    if refused is not None:
        return refused
    if not is_group_coordinator(ctx, req.group_id):
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.NOT_COORDINATOR)
    return groups.consumer_group_heartbeat(
        ctx.now_ms,
        req,
        api_version=ctx.api_version,
        client_id=ctx.client_id,
        client_host=f"/{ctx.client_host}",  # InetAddress.toString(), as ConsumerGroupDescribe shows it
        # a regex matches only the topics the principal may DESCRIBE (TopicRegexResolver): the
        # principal of the member whose heartbeat resolves the group's regexes, for all of them
        describable=describable_topics(ctx),
    )
