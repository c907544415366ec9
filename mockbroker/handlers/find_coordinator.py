"""FindCoordinator (key 10), v0-6: which broker coordinates a group, a transactional id or a
share partition.

v0: one Key, always a group. v1: KeyType (0 GROUP, 1 TRANSACTION), throttle time and ErrorMessage.
v3: flexible. v4 (KIP-699): CoordinatorKeys, one KeyType for all of them, and a Coordinators array
answering each key on its own. v5: TRANSACTION_ABORTABLE may appear (KIP-890; never here).
v6 (KIP-932): KeyType 2 SHARE, keys "groupId:topicId:partition"; below v6 it is INVALID_REQUEST.

Answers as KafkaApis.handleFindCoordinatorRequest does (the 4.x line):
- v0-3 success: ErrorMessage is Errors.NONE.message(), i.e. "NONE", not null.
- v0-3 failure: the request fails as a whole (sendErrorResponseMaybeThrottle ->
  FindCoordinatorResponse.prepareOldResponse): the error, the error's default message, and
  Node.noNode() (-1, "", -1).
- v4+: each key gets getCoordinator's (error, node) with ErrorMessage left at its default, which is
  "" (the field has no "default": "null", so Kafka's generated class starts from ""), on success
  and on per-key errors alike.
- A KeyType Kafka does not know makes CoordinatorType.forId throw InvalidRequestException out of
  the handler: every key (v4+) or the single answer (v0-3) is INVALID_REQUEST with that error's
  default message (FindCoordinatorRequest.getErrorResponse). Since v4+ has one KeyType per request,
  a bad type never mixes with good keys; a bad SHARE key does (the v6 per-key INVALID_REQUEST).

The coordinator's address is the one of the listener the request came in on
(metadataCache.getAliveBrokerNode(id, request.context.listenerName)); where advertised.listeners
leaves that listener out the broker has none, and the answer is COORDINATOR_NOT_AVAILABLE, as
Kafka's.

Differs from Kafka on purpose: the internal topics always exist and always have a leader here, so
COORDINATOR_NOT_AVAILABLE for a topic still being auto-created or without a live leader never
happens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import (
    group_coordinator,
    share_coordinator,
    share_coordinator_key,
    transaction_coordinator,
)
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import BrokerNode

API_KEY = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 6)

# FindCoordinatorRequest.CoordinatorType
GROUP = 0
TRANSACTION = 1
SHARE = 2
KEY_TYPES = (GROUP, TRANSACTION, SHARE)
SHARE_MIN_VERSION = 6
BATCHED_MIN_VERSION = 4  # FindCoordinatorRequest.MIN_BATCHED_VERSION

# Node.noNode()
NO_NODE_ID = -1
NO_HOST = ""
NO_PORT = -1

# Errors.message() for the errors this handler returns: the enum's name for NONE, otherwise the
# default message of the error's exception (Errors.java).
MESSAGES = {
    ErrorCode.NONE: "NONE",
    ErrorCode.INVALID_REQUEST: (
        "This most likely occurs because of a request being malformed by the client library or the "
        "message was sent to an incompatible broker. See the broker logs for more details."
    ),
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
}

Address = tuple[int, str, int]  # node id, host, port on the request's listener


def locate(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, Address | None]:
    """lookup's coordinator as its address on the request's listener: COORDINATOR_NOT_AVAILABLE
    where the broker has none there (getCoordinator's getAliveBrokerNode finding nothing)."""
    error, node = lookup(ctx, key_type, key)
    if node is None:
        return error, None
    address = node.address(ctx.listener)
    if address is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
    return error, (node.node_id, address[0], address[1])


def lookup(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, BrokerNode | None]:
    """KafkaApis.getCoordinator for a known key type: the error and the coordinator (None on error)."""
    cluster = ctx.cluster
    if key_type == GROUP:
        # KafkaApis.getCoordinator: DESCRIBE on the group (on the transactional id below) first.
        if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, key):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
        return ErrorCode.NONE, group_coordinator(cluster, key)
    if key_type == TRANSACTION:
        if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None
        return ErrorCode.NONE, transaction_coordinator(cluster, key)
    # SHARE: brokers ask for it from v6 on; below, and for a key SharePartitionKey rejects, INVALID_REQUEST.
    if ctx.api_version < SHARE_MIN_VERSION:
        return ErrorCode.INVALID_REQUEST, None
    coordinator_key = share_coordinator_key(key)
    if coordinator_key is None:
        return ErrorCode.INVALID_REQUEST, None
    return ErrorCode.NONE, share_coordinator(cluster, coordinator_key)


def coordinator_entry(key: str, error: ErrorCode, node: Address | None, message: str = "") -> Coordinator:
    if node is None:
        return Coordinator(key, NO_NODE_ID, NO_HOST, NO_PORT, error, message)
    return Coordinator(key, node[0], node[1], node[2], error, message)


async def handle(ctx: RequestContext, req: FindCoordinatorRequest) -> FindCoordinatorResponse:
    known_type = req.key_type in KEY_TYPES
    if ctx.api_version >= BATCHED_MIN_VERSION:
        if not known_type:
            message = MESSAGES[ErrorCode.INVALID_REQUEST]
            return FindCoordinatorResponse(
                coordinators=[coordinator_entry(k, ErrorCode.INVALID_REQUEST, None, message) for k in req.coordinator_keys]
            )
        return FindCoordinatorResponse(
            coordinators=[coordinator_entry(k, *locate(ctx, req.key_type, k)) for k in req.coordinator_keys]
        )
    # v0 has no KeyType on the wire; the codec decodes it as 0 (GROUP), as Kafka's default does.
    error, node = locate(ctx, req.key_type, req.key) if known_type else (ErrorCode.INVALID_REQUEST, None)
    if node is None:
        return FindCoordinatorResponse(
            error_code=error, error_message=MESSAGES[error], node_id=NO_NODE_ID, host=NO_HOST, port=NO_PORT
        )
    return FindCoordinatorResponse(
        error_code=ErrorCode.NONE,
        error_message=MESSAGES[ErrorCode.NONE],
        node_id=node[0],
        host=node[1],
        port=node[2],
    )
