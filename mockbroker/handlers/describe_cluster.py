"""DescribeCluster (key 60), v0-2: the brokers, the cluster id and the controller (KIP-700).

v1 (KIP-919): endpoint_type, 1 = brokers, 2 = controllers. A broker asked for controllers
answers MISMATCHED_ENDPOINT_TYPE (a client must ask a controller endpoint, which mockbroker
does not have); an endpoint type Kafka does not know is UNSUPPORTED_ENDPOINT_TYPE (both are
INVALID_REQUEST at v0, as AuthHelper.computeDescribeClusterResponse answers).
v2 (KIP-1073): include_fenced_brokers and is_fenced; no broker here is ever fenced.
cluster_authorized_operations is Integer.MIN_VALUE unless asked for; with no authorizer every
cluster operation is allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import (
    CLUSTER_NAME,
    AclOperation,
    ResourceType,
    authorized_operations,
    cluster_authorized,
)
from mockbroker.handlers.metadata import CLUSTER_OPERATIONS, NOT_REQUESTED
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_cluster import (
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CLUSTER
VERSIONS = (0, 2)

# org.apache.kafka.common.message.EndpointType ids (KIP-919)
BROKER_ENDPOINT = 1
CONTROLLER_ENDPOINT = 2


async def handle(ctx: RequestContext, req: DescribeClusterRequest) -> DescribeClusterResponse:
    cluster = ctx.cluster
    if not cluster_authorized(ctx, AclOperation.DESCRIBE):  # KafkaApis: DESCRIBE on the cluster
        return DescribeClusterResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None, brokers=[])
    if req.endpoint_type not in (BROKER_ENDPOINT, CONTROLLER_ENDPOINT):
        return DescribeClusterResponse(
            error_code=ErrorCode.INVALID_REQUEST if ctx.api_version == 0 else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message=f"Unsupported endpoint type {req.endpoint_type}",
        )
    if req.endpoint_type == CONTROLLER_ENDPOINT:
        return DescribeClusterResponse(
            error_code=ErrorCode.INVALID_REQUEST if ctx.api_version == 0 else ErrorCode.MISMATCHED_ENDPOINT_TYPE,
            error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER",
        )
    brokers = [
        DescribeClusterBroker(broker_id=n.node_id, host=address[0], port=address[1], rack=n.rack, is_fenced=False)
        for n in cluster.brokers.values()
        # a stopped broker leaves the cluster's metadata; the addresses are those of the request's
        # listener, and a broker without it is left out (MetadataCache.getAliveBrokerNodes(listenerName))
        if n.node_id not in cluster.down_brokers and (address := n.address(ctx.listener)) is not None
    ]
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=BROKER_ENDPOINT,
        cluster_id=cluster.config.cluster_id,
        # Kafka answers -1 rather than name a controller that is not in the node list (nor on a
        # listener no broker advertises: a real 4.3.1 answers -1 there).
        controller_id=cluster.controller_id if cluster.controller_id in cluster.brokers and brokers else -1,
        brokers=brokers,
        cluster_authorized_operations=(
            (CLUSTER_OPERATIONS if cluster.authorizer is None else authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS))
            if req.include_cluster_authorized_operations
            else NOT_REQUESTED
        ),
    )
